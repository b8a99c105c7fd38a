"""Reads: transactions with their operations, account statements, point-in-time balances and
the charts, each computed in the database."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db.models import Count, Max, Prefetch, Q, QuerySet

from ledgerproject.db import grouped_sums, one_snapshot
from ledgerproject.errors import ErrorCode, LedgerError
from ledgerproject.formats import parse_timestamp
from organizations.models import Account, Balance, Ledger
from transactions.models import Operation, ScheduledPosting, Transaction
from transactions.money import change_of, combine_scales, rescale

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


def scheduled_of(ledger: Ledger) -> QuerySet[ScheduledPosting]:
    return ScheduledPosting.objects.filter(
        organization_id=ledger.organization_id, ledger_id=ledger.pk
    )


def transactions_of_account(account: Account) -> QuerySet[Transaction]:
    touched = Operation.objects.filter(account_id=account.pk).values("transaction_id")
    return transactions_of(account.ledger).filter(pk__in=touched)


def statement_of(account: Account) -> QuerySet[Operation]:
    return Operation.objects.filter(organization_id=account.organization_id, account_id=account.pk)


AFTER = ("balance_available_after", "balance_on_hold_after", "balance_scale_after")


def balance_at(account: Account, *, at: dt.datetime, as_of: dt.datetime) -> dict[str, int]:
    """The balance effective at ``at`` as the ledger knew it at ``as_of`` (docs/TIME.md): what
    the operations written by ``as_of`` and effective by ``at`` did, at the scale the last of
    them left the balance at (scales never shrink in an account's version order). Before any
    operation the balance was zero, at the scale the first operation found it at (an overdraft
    limit may have raised it), or, with no operation yet, its scale now.

    Every operation takes effect no later than it is written, so each written by ``at`` counts,
    and their sum is the last one's ``balanceAfter``. What else counts was written after ``at``
    and backdated to it. Read from whichever end has fewer operations to add: that last one,
    plus the operations written since; or the sum of all those effective by ``at``."""
    operations = statement_of(account)
    with one_snapshot():
        top = _last(operations.filter(created_at__lte=as_of))
        if top is None:
            return {"available": 0, "onHold": 0, "scale": _opening_scale(account)}
        if at >= as_of:
            return _after(top)
        base = _last(operations.filter(created_at__lte=at))
        known = base["balance_version"] if base else 0
        if base is not None and top["balance_version"] - known <= known:
            later = operations.filter(
                created_at__gt=at, created_at__lte=as_of, effective_at__lte=at
            )
            scale = max(
                base["balance_scale_after"],
                later.aggregate(scale=Max("balance_scale_after"))["scale"] or 0,
            )
            available, on_hold = sum_of_changes(later, scale)
            start = _after(base)
            return {
                "available": available + rescale(start["available"], start["scale"], scale),
                "onHold": on_hold + rescale(start["onHold"], start["scale"], scale),
                "scale": scale,
            }
        counted = operations.filter(effective_at__lte=at, created_at__lte=as_of)
        scale = counted.aggregate(scale=Max("balance_scale_after"))["scale"]
        if scale is None:
            return {"available": 0, "onHold": 0, "scale": _opening_scale(account)}
        available, on_hold = sum_of_changes(counted, scale)
        return {"available": available, "onHold": on_hold, "scale": scale}


def _last(operations: QuerySet[Operation]) -> dict[str, Any] | None:
    """The last of these operations of one account (its highest version)."""
    return operations.order_by("-balance_version").values(*AFTER, "balance_version").first()


def _after(row: dict[str, Any]) -> dict[str, int]:
    return {
        "available": row["balance_available_after"],
        "onHold": row["balance_on_hold_after"],
        "scale": row["balance_scale_after"],
    }


def _opening_scale(account: Account) -> int:
    first = (
        statement_of(account)
        .order_by("balance_version")
        .values_list("balance_scale", flat=True)
        .first()
    )
    if first is None:
        first = (
            Balance.objects.filter(organization_id=account.organization_id, account_id=account.pk)
            .values_list("scale", flat=True)
            .first()
        )
    return first or 0


def sum_of_changes(operations: QuerySet[Operation], scale: int) -> tuple[int, int]:
    """What the operations did to their balance's (available, on hold), together, exactly at
    ``scale`` (at least theirs): summed in the database per kind of operation and scale."""
    sums = grouped_sums(operations, ("type", "effect", "scale"), ("amount",))
    available = on_hold = 0
    for (direction, effect, op_scale), total in sums.items():
        moved_available, moved_on_hold = change_of(
            direction, effect, rescale(total, op_scale, scale)
        )
        available, on_hold = available + moved_available, on_hold + moved_on_hold
    return available, on_hold


def statement_in_effective_order(
    account: Account, rows: list[Operation]
) -> list[tuple[Operation, dict[str, int]]]:
    """A page of the account's statement read in effective order (``effective_at``, then
    id), each operation with the balance effective just after it (``runningBalance``),
    computed at the balance's scale now: the sum of every operation before the page's
    earliest, then each in turn."""
    if not rows:
        return []
    ordered = sorted(rows, key=lambda op: (op.effective_at, op.id))
    first = ordered[0]
    with one_snapshot():
        scale = max(
            [op.balance_scale_after for op in rows]
            + list(
                Balance.objects.filter(
                    organization_id=account.organization_id, account_id=account.pk
                ).values_list("scale", flat=True)
            )
        )
        before = statement_of(account).filter(
            Q(effective_at__lt=first.effective_at)
            | Q(effective_at=first.effective_at, id__lt=first.id)
        )
        available, on_hold = sum_of_changes(before, scale)
    running = {}
    for op in ordered:
        moved_available, moved_on_hold = change_of(
            op.type, op.effect, rescale(op.amount, op.scale, scale)
        )
        available, on_hold = available + moved_available, on_hold + moved_on_hold
        running[op.id] = {"available": available, "onHold": on_hold, "scale": scale}
    return [(op, running[op.id]) for op in rows]


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
