"""``manage.py deliver_webhooks [--once]``: the event worker. Dispatches new events to the
matching webhook subscriptions, sends the due deliveries (signed, retried with backoff) and,
when ``LEDGER_AMQP_URL`` is set, publishes every event to RabbitMQ. Run as many copies as you
like: each takes its work with ``FOR UPDATE SKIP LOCKED``. SIGTERM or SIGINT stop it after the
delivery in hand."""

from __future__ import annotations

import signal
import time
from typing import Any

from django.core.management.base import BaseCommand
from django.db import close_old_connections

from outbox import broker, delivery


class Command(BaseCommand):
    help = "Deliver events to webhook subscriptions (and RabbitMQ when configured)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--once", action="store_true", help="One pass, then exit.")
        parser.add_argument("--interval", type=float, default=1.0, help="Idle poll (seconds).")

    def handle(self, *args: Any, once: bool = False, interval: float = 1.0, **kw: Any) -> None:
        self.stopping = False
        if not once:
            signal.signal(signal.SIGTERM, self._stop)
            signal.signal(signal.SIGINT, self._stop)
        target = broker.publisher()
        sent = 0
        try:
            while not self.stopping:
                work = self._pass(target)
                sent += work
                if once:
                    break
                if not work:
                    close_old_connections()
                    time.sleep(interval)
        finally:
            if target is not None:
                target.close()
        self.stdout.write(f"deliver_webhooks: {sent} events dispatched, sent or published.")

    def _pass(self, target: broker.Publisher | None) -> int:
        work = 0
        while (dispatched := delivery.fan_out()) and not self.stopping:
            work += dispatched
        while not self.stopping and delivery.deliver_next():
            work += 1
        if target is not None:
            while not self.stopping and (published := broker.publish_pending(target)):
                work += published
        return work

    def _stop(self, *_: Any) -> None:
        self.stopping = True
