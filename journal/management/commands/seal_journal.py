"""``manage.py seal_journal [--ledger ID]``: seal every ledger's entries not yet in a block."""

from __future__ import annotations

import uuid
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from journal.services import seal
from outbox.models import Event


class Command(BaseCommand):
    help = (
        "Seal the journal entries not yet in a block, of every ledger (or of one): for a "
        "deployment that seals on a schedule (LEDGER_JOURNAL_SEALING=off), or after a process "
        "was killed between a commit and its seal. Reads every ledger's events once."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--ledger", help="Only this ledger.")

    def handle(self, *args: Any, **options: Any) -> None:
        ledgers = Event.objects.filter(ledger_id__isnull=False)
        if options["ledger"]:
            try:
                ledgers = ledgers.filter(ledger_id=uuid.UUID(options["ledger"]))
            except ValueError:
                raise CommandError(f"Invalid ledger id: {options['ledger']}") from None
        pairs = ledgers.values_list("organization_id", "ledger_id").order_by().distinct()
        blocks = waiting = 0
        for organization_id, ledger_id in pairs:
            sealed = seal(organization_id, ledger_id, max_blocks=10**9)
            blocks += sealed.blocks
            waiting += sealed.waiting
        self.stdout.write(
            f"Sealed {blocks} block(s); {waiting} ledger(s) have entries left to seal (an "
            "older transaction still running, or another sealer at work)."
        )
