"""``manage.py purge_idempotency_keys``: remove expired idempotency keys."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from transactions import idempotency


class Command(BaseCommand):
    help = "Delete idempotency keys whose lifetime has ended. Safe to run at any time (cron)."

    def handle(self, *args: Any, **options: Any) -> None:
        self.stdout.write(f"Purged {idempotency.purge()} expired idempotency key(s).")
