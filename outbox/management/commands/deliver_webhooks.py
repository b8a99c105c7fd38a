"""``manage.py deliver_webhooks [--once] [--health-file PATH]``: the event worker
(``outbox.worker``). Dispatches new events to the matching webhook subscriptions, sends the due
deliveries (signed, concurrently, each within one deadline, retried with backoff) and, when
``LEDGER_AMQP_URL`` is set, publishes every event to RabbitMQ. Run as many copies as you like:
each claims its work with a lease. SIGTERM or SIGINT stop it once the attempts in flight end."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand
from django.db import close_old_connections

from outbox.worker import Worker


class Command(BaseCommand):
    help = "Deliver events to webhook subscriptions (and RabbitMQ when configured)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--once", action="store_true", help="One pass, then exit.")
        parser.add_argument("--interval", type=float, default=1.0, help="Idle poll (seconds).")
        parser.add_argument(
            "--health-file",
            type=Path,
            help="Rewrite this JSON file after every turn: counts, attempts in flight, the "
            "broker's state.",
        )

    def handle(
        self,
        *args: Any,
        once: bool = False,
        interval: float = 1.0,
        health_file: Path | None = None,
        **kw: Any,
    ) -> None:
        self.stopping = False
        if not once:
            signal.signal(signal.SIGTERM, self._stop)
            signal.signal(signal.SIGINT, self._stop)
        worker = self.worker = Worker(say=self._say)
        try:
            while not self.stopping:
                worked = worker.turn()
                if health_file is not None:
                    _write_health(health_file, worker.health())
                if once and not worked and not worker.in_flight:
                    break
                if not worked:
                    if not worker.in_flight:
                        close_old_connections()
                    worker.wait(interval)
        finally:
            worker.close()
            if health_file is not None:
                _write_health(health_file, worker.health())
        self.stdout.write(f"deliver_webhooks: {worker.summary()}")

    def _say(self, message: str) -> None:
        print(f"deliver_webhooks: {message}", file=sys.stderr, flush=True)

    def _stop(self, *_: Any) -> None:
        self.stopping = self.worker.stopping = True


def _write_health(path: Path, health: dict[str, Any]) -> None:
    """Replaced whole (written aside, then renamed), so a reader never sees half of it."""
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.write_text(json.dumps({"pid": os.getpid(), **health}, indent=2) + "\n")
    partial.replace(path)
