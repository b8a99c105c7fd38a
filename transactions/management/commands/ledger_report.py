"""``manage.py ledger_report --organization ID --ledger ID``: balances per account and asset,
as a rich table on a terminal and as plain aligned text otherwise; with ``--trial-balance``
or ``--period FROM TO``, the books by effective date as CSV (``transactions.reports``)."""

from __future__ import annotations

import csv
from collections import defaultdict
from typing import Any, cast

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from ledgerproject.amounts import format_amount
from ledgerproject.cli import add_ledger_arguments, api_error, is_terminal, ledger_from_options
from ledgerproject.errors import LedgerError
from organizations import periods
from organizations.models import Balance, Ledger
from transactions import reports

COLUMNS = ("asset", "account", "type", "available", "on hold", "status")
NUMERIC = {"available", "on hold"}


def _total(parts: list[tuple[int, int]]) -> tuple[int, int]:
    """Exact sum of (value, scale) pairs at their largest scale."""
    scale = max(s for _, s in parts)
    return sum(v * 10 ** (scale - s) for v, s in parts), scale


class Command(BaseCommand):
    help = (
        "Print the balances of a ledger's accounts, per asset: available and on hold, exact "
        "at each balance's scale, with per-asset totals of the non-external accounts (external "
        "accounts hold the other side, so everything sums to zero). Deleted accounts are left "
        "out unless --deleted is given."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        add_ledger_arguments(parser)
        parser.add_argument("--asset", help="Only this asset code.")
        parser.add_argument("--deleted", action="store_true", help="Include deleted accounts.")
        books = parser.add_mutually_exclusive_group()
        books.add_argument(
            "--trial-balance",
            action="store_true",
            help="Instead, print the trial balance as CSV: each account's debits, credits and "
            "balance effective at --at (docs/TIME.md).",
        )
        books.add_argument(
            "--period",
            nargs=2,
            metavar=("FROM", "TO"),
            help="Instead, print the period report as CSV: each account's opening balance, "
            "debits, credits and closing balance, effective from FROM to TO (days or "
            "timestamps; days in the ledger's time zone).",
        )
        parser.add_argument(
            "--at", help="The trial balance's moment: a day (its end) or a timestamp; now."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        ledger = ledger_from_options(options)
        if options["at"] and not options["trial_balance"]:
            raise CommandError("--at is the trial balance's moment: give --trial-balance too.")
        if options["trial_balance"] or options["period"]:
            self.books(ledger, options)
            return
        balances = Balance.objects.filter(
            organization_id=ledger.organization_id, ledger_id=ledger.pk
        ).select_related("account")
        if not options["deleted"]:
            balances = balances.filter(account__deleted_at__isnull=True)
        if options["asset"]:
            balances = balances.filter(asset_code=options["asset"])
        rows: list[tuple[str, ...]] = []
        totals: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for b in balances.order_by("asset_code", "account__alias", "pk").iterator(chunk_size=2000):
            account = b.account
            status = "deleted" if account.deleted_at else account.status_code
            rows.append(
                (
                    b.asset_code,
                    account.alias,
                    account.type,
                    format_amount(b.available, b.scale),
                    format_amount(b.on_hold, b.scale),
                    status,
                )
            )
            if not b.is_external:
                totals[b.asset_code] += [(b.available, b.scale), (b.on_hold, b.scale)]
        summary = [
            (asset, format_amount(*_total(parts))) for asset, parts in sorted(totals.items())
        ]
        title = f"Ledger {ledger.name} ({ledger.pk}) of {ledger.organization}"
        if is_terminal(self.stdout):
            self.rich_table(title, rows, summary)
        else:
            self.plain_table(title, rows, summary)

    def books(self, ledger: Ledger, options: dict[str, Any]) -> None:
        """The trial balance or the period report, as CSV (``transactions.reports``)."""
        try:
            if options["period"]:
                start, end = options["period"]
                report = reports.period_report(
                    ledger,
                    periods.ledger_moment(ledger, start, field="FROM", end_of_day=False),
                    periods.ledger_moment(ledger, end, field="TO", end_of_day=True),
                )
            else:
                at = options["at"]
                moment = (
                    periods.ledger_moment(ledger, at, field="--at", end_of_day=True)
                    if at
                    else timezone.now()
                )
                report = reports.trial_balance(ledger, moment)
        except LedgerError as exc:
            raise api_error(exc) from exc
        rows = reports.csv_rows(report)
        if options["asset"]:
            rows = rows[:1] + [row for row in rows[1:] if row[0] == options["asset"]]
        writer = csv.writer(self.stdout, lineterminator="\n")
        for row in rows:
            writer.writerow(row)

    def rich_table(
        self, title: str, rows: list[tuple[str, ...]], summary: list[tuple[str, str]]
    ) -> None:
        from rich.console import Console
        from rich.table import Table

        table = Table(title=title, show_lines=False)
        for column in COLUMNS:
            table.add_column(column, justify="right" if column in NUMERIC else "left")
        for row in rows:
            table.add_row(*row)
        console = Console(file=cast(Any, self.stdout)._out, force_terminal=True)
        console.print(table)
        for asset, total in summary:
            console.print(f"{asset}: {total} held by non-external accounts", highlight=False)

    def plain_table(
        self, title: str, rows: list[tuple[str, ...]], summary: list[tuple[str, str]]
    ) -> None:
        widths = [max([len(c), *(len(r[i]) for r in rows)]) for i, c in enumerate(COLUMNS)]

        def line(cells: tuple[str, ...]) -> str:
            return "  ".join(
                cell.rjust(w) if col in NUMERIC else cell.ljust(w)
                for cell, w, col in zip(cells, widths, COLUMNS, strict=True)
            ).rstrip()

        self.stdout.write(title)
        self.stdout.write(line(COLUMNS))
        self.stdout.write(line(tuple("-" * w for w in widths)))
        for row in rows:
            self.stdout.write(line(row))
        if not rows:
            self.stdout.write("(no accounts)")
        for asset, total in summary:
            self.stdout.write(f"{asset}: {total} held by non-external accounts")
