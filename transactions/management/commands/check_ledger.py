"""``manage.py check_ledger [--organization ID] [--ledger ID]``: verify the ledger invariants."""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from organizations.integrity import tree_problems
from organizations.models import Ledger
from transactions.integrity import CHECKS, ledger_check


class Command(BaseCommand):
    help = (
        "Check every ledger (or the chosen ones): balances sum to zero per asset, statements "
        "replay to balances, no non-external balance is negative, every transaction's debits "
        "equal its credits, and pending, committed and reverted states agree. Exits 1 naming "
        "each violation."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--organization", help="Only ledgers of this organization.")
        parser.add_argument("--ledger", help="Only this ledger.")

    def handle(self, *args: Any, **options: Any) -> None:
        ledgers = Ledger.objects.order_by("created_at", "id")
        try:
            if options["organization"]:
                ledgers = ledgers.filter(organization_id=options["organization"])
            if options["ledger"]:
                ledgers = ledgers.filter(pk=options["ledger"])
            ledgers_list = list(ledgers)
        except Exception as exc:
            raise CommandError(f"Invalid organization or ledger id: {exc}") from exc
        if not ledgers_list and (options["organization"] or options["ledger"]):
            named = " ".join(
                f"--{name} {options[name]}" for name in ("organization", "ledger") if options[name]
            )
            raise CommandError(f"No ledger matches {named}: nothing was checked.")
        violations: list[str] = [f"organizations: {p}" for p in tree_problems()]
        total = len(ledgers_list) * len(CHECKS)
        if sys.stderr.isatty() and total:
            from rich.progress import Progress

            with Progress(transient=True) as bar:
                task = bar.add_task("Checking", total=total)
                for ledger in ledgers_list:
                    report = ledger_check(ledger, progress=lambda _: bar.advance(task))
                    violations += report.violations
        else:
            for ledger in ledgers_list:
                report = ledger_check(ledger)
                self.stdout.write(
                    f"ledger {ledger.pk} ({ledger.name}): {len(report.checks)} checks, "
                    f"{len(report.violations)} violation(s)"
                )
                violations += report.violations
        for violation in violations:
            self.stderr.write(f"VIOLATION {violation}")
        if violations:
            raise CommandError(f"{len(violations)} violation(s) in {len(ledgers_list)} ledger(s).")
        names = "; ".join(name for name, _ in CHECKS)
        self.stdout.write(f"OK: {len(ledgers_list)} ledger(s) checked ({names}).")
