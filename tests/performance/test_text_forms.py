"""The fast text forms of instants and ids write exactly what the slow ones did."""

from __future__ import annotations

import datetime as dt
import random
import uuid
import zoneinfo

from ledgerproject.db import new_id
from ledgerproject.formats import TIMESTAMP_FORMAT, render_timestamp, str_of


def _slow(value: dt.datetime) -> str:
    return value.astimezone(dt.UTC).strftime(TIMESTAMP_FORMAT)


def test_an_instant_renders_as_strftime_wrote_it():
    rng = random.Random(5)
    zones = [dt.UTC, dt.timezone(dt.timedelta(hours=-3)), zoneinfo.ZoneInfo("Asia/Kolkata")]
    low, high = dt.datetime(1, 1, 2, tzinfo=dt.UTC), dt.datetime(9999, 12, 30, tzinfo=dt.UTC)
    span = int((high - low).total_seconds())
    instants = [
        low,
        high,
        dt.datetime(999, 12, 31, 23, 59, 59, tzinfo=dt.UTC),  # below 1000: strftime's path
        dt.datetime(1000, 1, 1, tzinfo=dt.UTC),
        dt.datetime(2026, 11, 25, 9, 34, 59, 167385, tzinfo=dt.UTC),
        *(low + dt.timedelta(seconds=rng.randrange(span), microseconds=rng.randrange(10**6))
          for _ in range(2000)),
    ]  # fmt: skip
    for instant in instants:
        for zone in zones:
            try:
                local = instant.astimezone(zone)
            except OverflowError:
                continue
            assert render_timestamp(local) == _slow(local), local
    assert render_timestamp(None) is None


def test_a_naive_instant_is_read_as_local_time_as_before():
    naive = dt.datetime(2026, 1, 2, 3, 4, 5)
    assert render_timestamp(naive) == _slow(naive)


def test_an_id_and_anything_else_render_as_str_wrote_them():
    ids = [new_id() for _ in range(200)] + [uuid.uuid4() for _ in range(200)]
    ids += [uuid.UUID(int=0), uuid.UUID(int=2**128 - 1)]
    for value in ids:
        assert str_of(value) == str(value)

    class Sub(uuid.UUID):
        pass

    sub = Sub(int=12345)
    assert str_of(sub) == str(sub)
    for other in ("BRL", "@alice", 7, dt.datetime(2026, 1, 2, tzinfo=dt.UTC)):
        assert str_of(other) == str(other)
