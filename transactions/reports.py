"""A ledger's books by effective date (docs/TIME.md): the trial balance at a moment, and the
period report between two. Each account's debits (what left it: a posting's source, a settled
hold) and credits (what reached it), per asset and chart of accounts, summed in the database
and exact at each asset's largest scale; a hold and its release move money within an account
and are neither. Every transaction's debits equal its credits, so each asset's do too."""

from __future__ import annotations

import datetime as dt
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.db.models import QuerySet

from ledgerproject.amounts import format_amount, rescale
from ledgerproject.db import grouped_sums, one_snapshot
from ledgerproject.errors import ErrorCode, LedgerError
from ledgerproject.formats import render_timestamp
from organizations.models import Account, Ledger
from transactions.models import Operation
from transactions.money import change_of

KEYS = ("asset_code", "chart_of_accounts", "account_id", "type", "effect", "scale")


@dataclass
class Line:
    """One account's movements under one chart of accounts, at its asset's scale."""

    account_id: uuid.UUID
    alias: str
    debits: int = 0
    credits: int = 0
    opening: int = 0  # the period report's: the balance before the period

    @property
    def closing(self) -> int:
        return self.opening + self.credits - self.debits


@dataclass
class Chart:
    code: str
    lines: list[Line] = field(default_factory=list)


@dataclass
class Asset:
    code: str
    scale: int
    charts: list[Chart] = field(default_factory=list)

    def total(self, name: str) -> int:
        return sum(getattr(line, name) for chart in self.charts for line in chart.lines)


@dataclass
class Report:
    ledger: Ledger
    assets: list[Asset]
    start: dt.datetime | None  # the period report's first instant; None: a trial balance
    end: dt.datetime


def _operations(ledger: Ledger) -> QuerySet[Operation]:
    return Operation.objects.filter(organization_id=ledger.organization_id, ledger_id=ledger.pk)


_Sums = dict[tuple[Any, ...], list[tuple[int, int, int]]]


def _sums(operations: QuerySet[Operation]) -> _Sums:
    """``{(asset, chart, account id): [(debits, credits, scale), ...]}``, one item per scale
    the account's operations were written at."""
    found: dict[tuple[Any, ...], list[tuple[int, int, int]]] = defaultdict(list)
    for (asset, chart, account, direction, effect, scale), total in grouped_sums(
        operations, KEYS, ("amount",)
    ).items():
        moved = sum(change_of(direction, effect, total))
        if moved:
            debit, credit = (-moved, 0) if moved < 0 else (0, moved)
            found[(asset, chart, account)].append((debit, credit, scale))
    return found


def _build(ledger: Ledger, before: _Sums, during: _Sums) -> list[Asset]:
    """The assets, charts and lines of the sums before the period (the opening balances) and
    in it, each asset at the largest scale either holds; each account by its alias now (a
    deleted one too: its operations are in the books)."""
    ids = {account for part in (before, during) for (_, _, account) in part}
    aliases = dict(
        Account.objects.filter(organization_id=ledger.organization_id, pk__in=ids).values_list(
            "pk", "alias"
        )
    )
    scales: dict[str, int] = {}
    for part in (before, during):
        for (asset, *_), items in part.items():
            scales[asset] = max([scales.get(asset, 0), *(s for _, _, s in items)])
    lines: dict[tuple[Any, ...], Line] = {}
    for part, opening_part in ((before, True), (during, False)):
        for key, items in part.items():
            asset, _, account = key
            line = lines.setdefault(key, Line(account, aliases[account]))
            top = scales[asset]
            for debit, credit, scale in items:
                debit, credit = rescale(debit, scale, top), rescale(credit, scale, top)
                if opening_part:
                    line.opening += credit - debit
                else:
                    line.debits += debit
                    line.credits += credit
    assets: dict[str, Asset] = {}
    charts: dict[tuple[str, str], Chart] = {}
    for (asset, chart, _), line in sorted(lines.items(), key=lambda kv: _order(kv[0], kv[1])):
        holder = assets.setdefault(asset, Asset(asset, scales[asset]))
        if (asset, chart) not in charts:
            charts[(asset, chart)] = Chart(chart)
            holder.charts.append(charts[(asset, chart)])
        charts[(asset, chart)].lines.append(line)
    return list(assets.values())


def _order(key: tuple[Any, ...], line: Line) -> tuple[Any, ...]:
    asset, chart, account = key
    return asset, chart == "", chart, line.alias, str(account)


def trial_balance(ledger: Ledger, at: dt.datetime) -> Report:
    """Each account's debits and credits effective at ``at`` or before, and its balance."""
    sums = _sums(_operations(ledger).filter(effective_at__lte=at))
    return Report(ledger, _build(ledger, {}, sums), None, at)


def period_report(ledger: Ledger, start: dt.datetime, end: dt.datetime) -> Report:
    """Each account's balance before ``start`` (opening), its debits and credits effective from
    ``start`` to ``end`` (both included), and its balance then (closing)."""
    if end < start:
        raise LedgerError(ErrorCode.INVALID_DATE_RANGE, "The period ends before it starts.")
    operations = _operations(ledger)
    with one_snapshot():  # the opening and the movements of one state of the books
        before = _sums(operations.filter(effective_at__lt=start))
        during = _sums(operations.filter(effective_at__gte=start, effective_at__lte=end))
        return Report(ledger, _build(ledger, before, during), start, end)


def _figures(report: Report) -> tuple[str, ...]:
    """The figures of each line, as both renderings name them (a trial balance's lines also
    carry their balance)."""
    if report.start is not None:
        return ("opening", "debits", "credits", "closing")
    return ("debits", "credits")


def report_data(report: Report) -> dict[str, Any]:
    """The report as the API answers it."""
    period = report.start is not None
    fields = _figures(report)

    def line_data(line: Line) -> dict[str, Any]:
        data: dict[str, Any] = {"accountId": str(line.account_id), "alias": line.alias}
        data.update({name: getattr(line, name) for name in fields})
        if not period:
            data["balance"] = line.closing
        return data

    def totals(lines: list[Line]) -> dict[str, int]:
        return {name: sum(getattr(line, name) for line in lines) for name in fields}

    assets = []
    for asset in report.assets:
        charts = [
            {"chartOfAccounts": chart.code, **totals(chart.lines),
             "accounts": [line_data(line) for line in chart.lines]}
            for chart in asset.charts
        ]  # fmt: skip
        every = [line for chart in asset.charts for line in chart.lines]
        assets.append(
            {"assetCode": asset.code, "scale": asset.scale, **totals(every), "charts": charts}
        )
    ledger = report.ledger
    when = (
        {"from": render_timestamp(report.start), "to": render_timestamp(report.end)}
        if period
        else {"at": render_timestamp(report.end)}
    )
    return {"ledgerId": str(ledger.pk), "timeZone": ledger.time_zone, **when, "assets": assets}


def csv_rows(report: Report) -> list[list[str]]:
    """The report as rows of text (the admin's CSV and ``manage.py ledger_report``): a header,
    then one row per account and chart, then each asset's total; figures at the asset's
    scale."""
    period = report.start is not None
    names = _figures(report)
    header = ["asset", "chart_of_accounts", "account", "account_id", *names]
    if not period:
        header.append("balance")
    rows = [header]
    for asset in report.assets:
        for chart in asset.charts:
            for line in chart.lines:
                values = [getattr(line, name) for name in names]
                if not period:
                    values.append(line.closing)
                rows.append(
                    [asset.code, chart.code, line.alias, str(line.account_id)]
                    + [format_amount(v, asset.scale) for v in values]
                )
        totals = [asset.total(name) for name in names]
        if not period:
            totals.append(asset.total("closing"))
        rows.append([asset.code, "", "total", ""] + [format_amount(v, asset.scale) for v in totals])
    return rows
