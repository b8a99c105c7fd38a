"""Closed periods: a ledger closes its books through a day (``closed_through``, a date in the
ledger's time zone), and nothing effective on or before that day is written after the close
commits (docs/TIME.md). Closing takes the ledger's row exclusively, so it waits for the writes
in flight and the writes after it see it; every write checks its effective times against the
row it holds (``transactions.guards``, and on PostgreSQL the write function itself)."""

from __future__ import annotations

import datetime as dt
import functools
import zoneinfo
from typing import Any

from django.utils import timezone

from ledgerproject.errors import ErrorCode, LedgerError
from ledgerproject.formats import parse_timestamp
from organizations.models import Ledger


def period_closed(ledger: Ledger) -> LedgerError:
    assert ledger.closed_through is not None
    through = ledger.closed_through.isoformat()
    return LedgerError(
        ErrorCode.PERIOD_CLOSED,
        f"The ledger's books are closed through {through} ({ledger.time_zone}): nothing "
        "effective on or before that day can be written.",
        fields={"effectiveAt": f"closed through {through}"},
    )


def check_open(ledger: Ledger, effective_at: dt.datetime | None) -> None:
    """Refuse (422 0124) a write effective in the ledger's closed period."""
    opens = ledger.period_opens_at
    if opens is not None and effective_at is not None and effective_at < opens:
        raise period_closed(ledger)


def day_start(day: dt.date, time_zone: str) -> dt.datetime:
    """The first instant of a day of a ledger (in UTC). A day ends where the next begins: not
    at 23:59:59 on the clock, which a clock turned back at midnight shows twice."""
    start = dt.datetime.combine(day, dt.time.min, tzinfo=zoneinfo.ZoneInfo(time_zone))
    return start.astimezone(dt.UTC)


def day_end(day: dt.date, time_zone: str) -> dt.datetime:
    """The last instant of a day of a ledger: just before the next one begins."""
    return day_start(day + dt.timedelta(days=1), time_zone) - dt.timedelta(microseconds=1)


def open_from(closed_through: dt.date | None, time_zone: str) -> dt.datetime | None:
    """The first instant of a ledger's open period: the start of the day after
    ``closed_through`` in its time zone; None while no period is closed."""
    if closed_through is None:
        return None
    return day_start(closed_through + dt.timedelta(days=1), time_zone)


@functools.cache
def _zones() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())


def checked_time_zone(name: str) -> str:
    if name not in _zones():
        raise LedgerError(
            ErrorCode.BAD_REQUEST,
            "timeZone must be an IANA time zone name, such as UTC or America/Sao_Paulo.",
            fields={"timeZone": "not a time zone"},
        )
    return name


def closing(ledger: Ledger, data: dict[str, Any], *, may_reopen: bool) -> dt.datetime | None:
    """Check a change of the ledger's period (``closed_through``, ``time_zone`` in ``data``);
    answer the first instant of the new open period. A period can be closed once it is over
    (before today, in the ledger's time zone); moving the start back reopens books and needs
    ``may_reopen`` (403 0043 otherwise)."""
    time_zone = checked_time_zone(data.get("time_zone", ledger.time_zone))
    through = data.get("closed_through", ledger.closed_through)
    if (
        through is not None
        and through >= timezone.now().astimezone(zoneinfo.ZoneInfo(time_zone)).date()
    ):
        raise LedgerError(
            ErrorCode.BAD_REQUEST,
            f"closedThrough must be a day that is over in the ledger's time zone ({time_zone}).",
            fields={"closedThrough": "not over yet"},
        )
    before, after = ledger.period_opens_at, open_from(through, time_zone)
    if before is not None and (after is None or after < before) and not may_reopen:
        raise LedgerError(
            ErrorCode.INSUFFICIENT_PRIVILEGES,
            "Reopening a closed period (moving closedThrough back, or clearing it) needs an "
            "unrestricted token or the staff permission to reopen periods.",
            fields={"closedThrough": "reopening needs the permission"},
        )
    return after


def ledger_moment(ledger: Ledger, raw: str, *, field: str, end_of_day: bool) -> dt.datetime:
    """A moment a report names: a timestamp, or a date, the ledger's day in its time zone (its
    first instant, or with ``end_of_day`` its last). Anything else is 400 0077."""
    value = parse_timestamp(raw, field=field, end_of_day=end_of_day)
    if len(raw.strip()) != 10:
        return value
    day = value.date()
    return (day_end if end_of_day else day_start)(day, ledger.time_zone)
