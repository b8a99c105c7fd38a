"""JSON out, fast: the one encoder of the posting path (the rows it sends to the database, its
event, the API's answers). orjson writes the same JSON as the standard library many times
faster; what orjson cannot write, an integer beyond 64 bits (amounts
have up to 38 digits), is written by the standard library instead, to the same text.

Never decode money with orjson: it reads an integer beyond 64 bits as a float. Parsing stays
with the standard library (``ledgerproject.api.parsers``)."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from typing import Any

import orjson

Default = Callable[[Any], Any]

# datetimes go to the caller's ``default``, as they did with the standard library (Django's and
# DRF's encoders cut them to milliseconds; the rows keep microseconds).
_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME


def _orjson(value: Any, default: Default | None) -> bytes | None:
    """orjson's text, or None where only the standard library can write it (a big integer)."""
    try:
        return orjson.dumps(value, default=default, option=_OPTIONS)
    except TypeError as error:  # orjson.JSONEncodeError
        if "64-bit" not in str(error):
            raise
        return None


def _stdlib(value: Any, default: Default | None) -> str:
    """The same text by the standard library, for what orjson cannot write."""
    return json.dumps(value, default=default, ensure_ascii=False, separators=(",", ":"))


def dumps(value: Any, default: Default | None = None) -> bytes:
    """Compact UTF-8 JSON (no spaces, no ASCII escapes), as bytes."""
    encoded = _orjson(value, default)
    return _stdlib(value, default).encode() if encoded is None else encoded


def _row_value(value: Any) -> str:
    """What the standard library cannot write in a row: a datetime as ``isoformat`` gives it
    (which is what orjson writes), anything else (a UUID, a Decimal) as its text."""
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    return str(value)


def row_text(value: Any) -> str:
    """Rows for the database (``jsonb_to_recordset``) as JSON text: datetimes in full, with
    their microseconds, UUIDs as text. orjson writes datetimes and UUIDs itself, without a call
    back into Python for each (a third of the time of ``dumps`` with a ``default``); what it has
    no type for goes through ``_row_value``, and everything goes through the standard library
    when orjson refuses the rows (an integer beyond 64 bits, a time of day with a zone), to the
    same text. Two limits, which the rows never reach: orjson writes a UTC offset to the minute
    (the rows' datetimes are aware and in UTC: ``timezone.now()``, and DRF's parsing of a
    client's timestamp, convert to it), and writes some times of day wrongly (no column is one:
    a test holds that)."""
    try:
        return orjson.dumps(value, default=_row_value).decode()
    except TypeError:  # orjson.JSONEncodeError
        return _stdlib(value, _row_value)


def plain(value: Any, default: Default | None = None) -> Any:
    """``value`` as the plain JSON values it encodes to (dicts, lists, str, int, float, bool,
    None), exactly: a big integer stays an integer (the standard library reads it back)."""
    encoded = _orjson(value, default)
    return json.loads(_stdlib(value, default)) if encoded is None else orjson.loads(encoded)
