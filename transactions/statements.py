"""An account's statement for a period of its ledger's days (the back office's account page
and its CSV): the opening balance (effective before the first day began), each operation
effective in the period, in effective order, with the balance just after it, and the closing
balance (effective at the end of the last day).

Everything is read as the ledger knew it at one moment: the balances in one snapshot of the
database, and the lines, read later (a CSV streams them), bounded by the account's last
operation in that snapshot (``version``). An account's operations are numbered in the order
their postings committed (each holds the balance's lock until it commits), so an operation
written later, even one backdated into the period, is in neither the lines nor the balances,
and the closing balance is the opening plus the lines, whenever the lines are read. Amounts
are at the account's scale, which no operation's exceeds (a balance's scale only grows)."""

from __future__ import annotations

import datetime as dt
import zoneinfo
from collections.abc import Iterator
from dataclasses import dataclass

from django.db.models import Max, QuerySet
from django.db.models.functions import TruncDate
from django.utils import timezone

from ledgerproject.db import grouped_sums, one_snapshot
from organizations import periods
from organizations.models import Account, Balance
from transactions.models import Operation
from transactions.money import change_of, rescale
from transactions.selectors import balance_at, statement_of, sum_of_changes

# The longest period a statement covers.
MAX_DAYS = 366


@dataclass(frozen=True)
class Statement:
    account: Account
    first_day: dt.date
    last_day: dt.date
    as_of: dt.datetime
    version: int
    scale: int
    opening: dict[str, int]
    closing: dict[str, int]

    @property
    def start(self) -> dt.datetime:
        return periods.day_start(self.first_day, self.account.ledger.time_zone)

    @property
    def end(self) -> dt.datetime:
        return periods.day_end(self.last_day, self.account.ledger.time_zone)

    def operations(self) -> Iterator[Operation]:
        return (
            _in_period(self.account, self.start, self.end, self.version)
            .select_related("transaction")
            .order_by("effective_at", "id")
            .iterator(chunk_size=500)
        )

    def daily(self) -> list[tuple[dt.date, dict[str, int]]]:
        """The balance effective at the end of each day of the period, from one query that
        sums the period's operations per day (any number of them)."""
        zone = zoneinfo.ZoneInfo(self.account.ledger.time_zone)
        operations = _in_period(self.account, self.start, self.end, self.version).annotate(
            day=TruncDate("effective_at", tzinfo=zone)
        )
        changes: dict[dt.date, tuple[int, int]] = {}
        sums = grouped_sums(operations, ("day", "type", "effect", "scale"), ("amount",))
        for (day, direction, effect, scale), total in sums.items():
            moved, held = change_of(direction, effect, rescale(total, scale, self.scale))
            before = changes.get(day, (0, 0))
            changes[day] = (before[0] + moved, before[1] + held)
        available, on_hold = self.opening["available"], self.opening["onHold"]
        days = []
        for n in range((self.last_day - self.first_day).days + 1):
            day = self.first_day + dt.timedelta(days=n)
            moved, held = changes.get(day, (0, 0))
            available, on_hold = available + moved, on_hold + held
            days.append((day, {"available": available, "onHold": on_hold, "scale": self.scale}))
        return days

    def lines(self) -> Iterator[tuple[Operation, dict[str, int]]]:
        """Each operation of the period with the balance effective just after it."""
        available, on_hold = self.opening["available"], self.opening["onHold"]
        for op in self.operations():
            moved, held = change_of(op.type, op.effect, rescale(op.amount, op.scale, self.scale))
            available, on_hold = available + moved, on_hold + held
            yield op, {"available": available, "onHold": on_hold, "scale": self.scale}


def _in_period(
    account: Account, start: dt.datetime, end: dt.datetime, version: int
) -> QuerySet[Operation]:
    """The account's operations effective from ``start`` to ``end``, up to ``version``."""
    return statement_of(account).filter(
        effective_at__gte=start, effective_at__lte=end, balance_version__lte=version
    )


def statement_for(account: Account, first_day: dt.date, last_day: dt.date) -> Statement:
    """The statement of ``account`` from ``first_day`` to ``last_day`` (its ledger's days,
    both included; at most ``MAX_DAYS``)."""
    if last_day < first_day or (last_day - first_day).days >= MAX_DAYS:
        raise ValueError(f"a statement covers 1 to {MAX_DAYS} days, the first before the last")
    time_zone = account.ledger.time_zone
    start, end = periods.day_start(first_day, time_zone), periods.day_end(last_day, time_zone)
    with one_snapshot():
        version = statement_of(account).aggregate(last=Max("balance_version"))["last"] or 0
        # Taken once the snapshot is: whatever it holds was written before.
        as_of = timezone.now()
        opening = balance_at(account, at=start - dt.timedelta(microseconds=1), as_of=as_of)
        now = Balance.objects.filter(
            organization_id=account.organization_id, account_id=account.pk
        ).values_list("scale", flat=True)
        scale = max([opening["scale"], *now])
        available, on_hold = sum_of_changes(_in_period(account, start, end, version), scale)
    opening = {
        "available": rescale(opening["available"], opening["scale"], scale),
        "onHold": rescale(opening["onHold"], opening["scale"], scale),
        "scale": scale,
    }
    closing = {
        "available": opening["available"] + available,
        "onHold": opening["onHold"] + on_hold,
        "scale": scale,
    }
    return Statement(account, first_day, last_day, as_of, version, scale, opening, closing)
