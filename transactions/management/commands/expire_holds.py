"""``manage.py expire_holds``: cancel pending transactions whose holds expired. Runs until
stopped, one pass every ``--interval`` seconds when there was nothing to do; ``--once`` for a
single pass (until nothing is due). Safe to run in several copies (``transactions/expiry.py``)."""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from transactions.expiry import expire_due


class Command(BaseCommand):
    help = (
        "Cancel pending transactions past their expiry (a long-running worker; --once: one pass)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--once", action="store_true", help="One pass, then exit.")
        parser.add_argument("--interval", type=float, default=1.0, help="Seconds between polls.")
        parser.add_argument("--batch", type=int, default=100, help="Transactions per query.")

    def handle(self, *args: Any, **options: Any) -> None:
        total = 0
        try:
            while True:
                done = expire_due(limit=options["batch"])
                total += done
                if done:
                    continue
                if options["once"]:
                    break
                time.sleep(options["interval"])
        except KeyboardInterrupt:
            pass
        self.stdout.write(f"expired {total} transaction(s)")
