"""``manage.py ledger_report --organization ID --ledger ID``: balances per account and asset,
as a rich table on a terminal and as plain aligned text otherwise."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, cast

from django.core.management.base import BaseCommand, CommandParser

from ledgerproject.amounts import format_amount
from ledgerproject.cli import add_ledger_arguments, is_terminal, ledger_from_options
from organizations.models import Balance

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

    def handle(self, *args: Any, **options: Any) -> None:
        ledger = ledger_from_options(options)
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
