"""``manage.py post_scheduled``: the scheduler. Posts the scheduled postings whose time has come
and commits the holds due to commit themselves (``transactions/scheduling.py``). Runs until
stopped (SIGTERM or SIGINT end it after the posting in progress), one pass every ``--interval``
seconds when there was nothing to do; ``--once`` for a single pass (until nothing is due). Safe
to run in several copies: each posting is made once."""

from __future__ import annotations

import signal
import threading
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.db import close_old_connections

from transactions.scheduling import Pass, post_due


class Command(BaseCommand):
    help = (
        "Post scheduled postings and commit holds when their time comes (a long-running worker; "
        "--once: one pass)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--once", action="store_true", help="One pass, then exit.")
        parser.add_argument("--interval", type=float, default=1.0, help="Seconds between polls.")
        parser.add_argument("--batch", type=int, default=100, help="Rows per query.")

    def handle(self, *args: Any, **options: Any) -> None:
        stop = threading.Event()
        if not options["once"]:
            for signum in (signal.SIGTERM, signal.SIGINT):
                signal.signal(signum, lambda *_: stop.set())
        total = Pass()
        while not stop.is_set():
            done = post_due(limit=options["batch"], stopping=stop.is_set)
            total.add(done)
            if done:
                continue
            if options["once"]:
                break
            close_old_connections()
            stop.wait(options["interval"])
        self.stdout.write(f"post_scheduled: {total}")
