"""Reads: transactions with their operations, account statements, point-in-time balances and
the charts, each computed in the database."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db.models import Count, Prefetch, QuerySet

from ledgerproject.db import grouped_sums
from ledgerproject.errors import ErrorCode, LedgerError
from ledgerproject.formats import parse_timestamp
from organizations.models import Account, Balance, Ledger
from transactions.models import Operation, Transaction
from transactions.money import combine_scales, rescale

CHART_TYPES = (
    "totalTransactions",
    "transactionsByStatus",
    "totalAmountByAsset",
    "overdraftByAsset",
)
CHART_ALIASES = {"totalAmountByInstrument": "totalAmountByAsset"}


def transactions_of(ledger: Ledger) -> QuerySet[Transaction]:
    return Transaction.objects.filter(
        organization_id=ledger.organization_id, ledger_id=ledger.pk
    ).prefetch_related(
        Prefetch("operations", queryset=Operation.objects.order_by("created_at", "id"))
    )


def transactions_of_account(account: Account) -> QuerySet[Transaction]:
    touched = Operation.objects.filter(account_id=account.pk).values("transaction_id")
    return transactions_of(account.ledger).filter(pk__in=touched)


def statement_of(account: Account) -> QuerySet[Operation]:
    return Operation.objects.filter(account_id=account.pk)


def balance_at(account: Account, at: dt.datetime) -> dict[str, int]:
    """The balance as it was at ``at``, at the scale it had then: its last operation's
    ``balanceAfter``. Before any operation it was zero, at the scale the first operation found
    it at (an overdraft limit may have raised it), or, with no operation yet, its scale now."""
    last = (
        Operation.objects.filter(account_id=account.pk, created_at__lte=at)
        .order_by("-balance_version")
        .values("balance_available_after", "balance_on_hold_after", "balance_scale_after")
        .first()
    )
    if last is None:
        first = (
            Operation.objects.filter(account_id=account.pk)
            .order_by("balance_version")
            .values_list("balance_scale", flat=True)
            .first()
        )
        if first is None:
            first = (
                Balance.objects.filter(
                    organization_id=account.organization_id, account_id=account.pk
                )
                .values_list("scale", flat=True)
                .first()
            )
        return {"available": 0, "onHold": 0, "scale": first or 0}
    return {
        "available": last["balance_available_after"],
        "onHold": last["balance_on_hold_after"],
        "scale": last["balance_scale_after"],
    }


def _date(value: Any, name: str) -> dt.date:
    if value in (None, ""):
        raise LedgerError(
            ErrorCode.MISSING_FIELDS,
            f"{name} is required for this chart.",
            fields={name: "required"},
        )
    found = _optional_date(value, name)
    assert found is not None
    return found


def _optional_date(value: Any, name: str) -> dt.date | None:
    """None when absent; else a date or timestamp (an empty one is malformed: 0077)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise LedgerError(ErrorCode.INVALID_DATE_FORMAT, f"{name} must be YYYY-MM-DD.")
    return parse_timestamp(value, field=name).date()


def _check_range(start: dt.date | None, end: dt.date | None) -> None:
    if start is not None and end is not None and end < start:
        raise LedgerError(ErrorCode.INVALID_DATE_RANGE, "endDate is before startDate.")


def chart_compute(
    *, ledger: Ledger, chart_type: str, start: Any = None, end: Any = None, limit: int = 3
) -> dict[str, Any]:
    chart_type = CHART_ALIASES.get(chart_type, chart_type)
    if chart_type not in CHART_TYPES:
        raise LedgerError(
            ErrorCode.CHART_TYPE_NOT_FOUND,
            f"Unknown chart type '{chart_type}'; use one of {', '.join(CHART_TYPES)}.",
            fields={"type": "unknown chart type"},
        )
    if chart_type in ("totalAmountByAsset", "overdraftByAsset"):
        # A snapshot of now: the dates are optional and select nothing, but those given are
        # checked as every chart checks them, so that a client's mistake is not answered 200.
        _check_range(_optional_date(start, "startDate"), _optional_date(end, "endDate"))
        return {
            "type": chart_type,
            "startDate": None,
            "endDate": None,
            "data": _amount_by_asset(ledger, limit, overdrawn=chart_type == "overdraftByAsset"),
        }
    start_date, end_date = _date(start, "startDate"), _date(end, "endDate")
    _check_range(start_date, end_date)
    begin = dt.datetime.combine(start_date, dt.time.min, tzinfo=dt.UTC)
    until = dt.datetime.combine(end_date + dt.timedelta(days=1), dt.time.min, tzinfo=dt.UTC)
    in_range = Transaction.objects.filter(
        organization_id=ledger.organization_id,
        ledger_id=ledger.pk,
        created_at__gte=begin,
        created_at__lt=until,
    )
    if chart_type == "totalTransactions":
        count = in_range.filter(status=Transaction.SENT).count()
        data = [{"metric": "totalTransactions", "count": count}]
    else:
        counts = dict(in_range.values_list("status").annotate(n=Count("id")).order_by())
        data = [{"metric": s, "count": counts.get(s, 0)} for s in Transaction.STATUSES]
    return {
        "type": chart_type,
        "startDate": start_date.isoformat(),
        "endDate": end_date.isoformat(),
        "data": data,
    }


def _amount_by_asset(ledger: Ledger, limit: int, *, overdrawn: bool) -> list[dict[str, Any]]:
    """available + onHold per asset over active non-external accounts, exact at each asset's
    largest balance scale; largest first. ``overdrawn``: instead, how much the overdrawn
    accounts owe (minus their negative available), per asset."""
    active = Balance.objects.filter(
        organization_id=ledger.organization_id,
        ledger_id=ledger.pk,
        is_external=False,
        account__deleted_at__isnull=True,
    )
    if overdrawn:
        active = active.filter(available__lt=0)
    columns = ("available",) if overdrawn else ("available", "on_hold")
    sign = -1 if overdrawn else 1
    sums = grouped_sums(active, ("asset_code", "scale"), columns)
    totals = combine_scales((code, scale, sign * total) for (code, scale), total in sums.items())
    items: list[dict[str, Any]] = [
        {"metric": code, "count": total, "scale": scale} for code, (total, scale) in totals.items()
    ]
    items.sort(key=lambda item: (-rescale(item["count"], item["scale"], 18), item["metric"]))
    return items[:limit]
