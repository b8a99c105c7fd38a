"""The text forms the service reads and writes, in one place: timestamps (rendered
``YYYY-MM-DDTHH:MM:SS+0000``, read as a date or an ISO 8601 timestamp), and digit strings.
Used by the API, the admin and the commands alike."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import orjson
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from ledgerproject.errors import ErrorCode, LedgerError

TIMESTAMP_FORMAT = "%Y-%m-%dT%H:%M:%S%z"


# A day inside Python's datetime range at each end, so that converting to UTC and adding or
# subtracting a day (charts do) can never overflow.
EARLIEST = dt.datetime(1, 1, 2, tzinfo=dt.UTC)
LATEST = dt.datetime(9999, 12, 30, 23, 59, 59, 999999, tzinfo=dt.UTC)


def digits_to_int(raw: str | None, *, max_digits: int = 9) -> int | None:
    """A non-negative integer written in at most ``max_digits`` ASCII digits, else None.
    (``str.isdigit`` alone accepts '²' and numbers too long for ``int``: both would crash.)"""
    if not raw or len(raw) > max_digits or not (raw.isascii() and raw.isdigit()):
        return None
    return int(raw)


def render_timestamp(value: dt.datetime | None) -> str | None:
    """``TIMESTAMP_FORMAT`` in UTC. ``strftime`` parses its format on every call; for a year of
    four digits ``isoformat`` writes the same text to the second in a sixth of the work (below
    1000 ``strftime``'s ``%Y`` does not pad, so those go through it)."""
    if value is None:
        return None
    if value.tzinfo is not dt.UTC:
        value = value.astimezone(dt.UTC)
    if value.year >= 1000:
        return value.isoformat(timespec="seconds")[:19] + "+0000"
    return value.strftime(TIMESTAMP_FORMAT)


def str_of(value: Any) -> str:
    """``str(value)``. The standard library writes a UUID's text in Python; orjson writes the
    same text (lowercase, hyphenated) in C, in a third of the work. Anything but a
    ``uuid.UUID`` itself goes through ``str``."""
    if type(value) is uuid.UUID:
        return orjson.dumps(value)[1:-1].decode()
    return str(value)


def parse_timestamp(raw: str, *, field: str, end_of_day: bool = False) -> dt.datetime:
    """A date (``YYYY-MM-DD``) or a full ISO 8601 timestamp; anything else is 400 0077."""
    text = raw.strip()
    value: dt.datetime | None = None
    try:
        if len(text) == 10:
            day = parse_date(text)
            if day is not None:
                value = dt.datetime.combine(day, dt.time.max if end_of_day else dt.time.min)
        else:
            value = parse_datetime(text.replace(" ", "+", 1) if text.count(" ") == 1 else text)
    except ValueError:
        value = None
    if value is None:
        raise LedgerError(
            ErrorCode.INVALID_DATE_FORMAT,
            f"'{field}' must be YYYY-MM-DD or an ISO 8601 timestamp.",
            fields={field: "invalid date"},
        )
    if timezone.is_naive(value):
        value = value.replace(tzinfo=dt.UTC)
    try:
        in_range = EARLIEST <= value.astimezone(dt.UTC) <= LATEST
    except OverflowError:
        in_range = False
    if not in_range:
        raise LedgerError(
            ErrorCode.INVALID_DATE_FORMAT,
            f"'{field}' must lie between 0001-01-02 and 9999-12-30 (UTC).",
            fields={field: "out of range"},
        )
    return value
