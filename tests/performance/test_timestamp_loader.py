"""Timestamps are read by psycopg's own loader (``backends.postgresql.UtcTimestamptzLoader``),
not by the loader Django registers, written in Python: the same values, a fraction of the work.
Django's own still serves a cursor whose time zone is not UTC."""

from __future__ import annotations

import datetime as dt
import zoneinfo

import pytest
from django.db import connection, connections
from psycopg.adapt import Transformer
from psycopg.pq import Format

from organizations.models import Organization

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.django_db,
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="psycopg's loaders are PostgreSQL's"
    ),
]

INSTANT = dt.datetime(2026, 3, 29, 1, 30, 15, 123456, tzinfo=dt.UTC)


def _read(sql: str, params: list[object]) -> object:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()[0]


def test_psycopg_s_loader_reads_the_timestamps() -> None:
    from ledgerproject.backends.postgresql.base import _PSYCOPG_LOADER, UtcTimestamptzLoader

    connection.ensure_connection()
    oid = connection.connection.adapters.types["timestamptz"].oid
    assert connection.connection.adapters.get_loader(oid, Format.TEXT) is UtcTimestamptzLoader
    with connection.cursor() as cursor:
        loader = Transformer(cursor.cursor).get_loader(oid, Format.TEXT)
    assert type(loader) is _PSYCOPG_LOADER


@pytest.mark.parametrize(
    "text",
    [
        "2026-03-29 01:30:15.123456+00",
        "2026-03-29 03:30:15.123456+02",
        "2026-03-28 20:30:15.123456-05",
    ],
)
def test_the_same_instant_in_utc_whatever_offset_it_was_written_with(text: str) -> None:
    value = _read("SELECT %s::timestamptz", [text])
    assert value == INSTANT
    assert value.tzinfo is dt.UTC  # what Django's loader gave: datetime.timezone.utc


def test_the_extremes_and_null_read_as_before() -> None:
    assert _read("SELECT %s::timestamptz", [None]) is None
    assert _read("SELECT '0001-01-01 00:00:00+00'::timestamptz", []) == dt.datetime.min.replace(
        tzinfo=dt.UTC
    )
    assert _read("SELECT '9999-12-31 23:59:59.999999+00'::timestamptz", []) == (
        dt.datetime.max.replace(tzinfo=dt.UTC)
    )


def test_rows_read_through_the_orm_and_a_server_side_cursor() -> None:
    made = Organization.objects.create(legal_name="Time", legal_document="1", path="t")
    stored = Organization.objects.get(pk=made.pk)
    assert stored.created_at == made.created_at and stored.created_at.tzinfo is dt.UTC
    # a named cursor (QuerySet.iterator) is made by Django's own code, which reads the
    # loader's time zone
    (streamed,) = list(Organization.objects.filter(pk=made.pk).iterator(chunk_size=10))
    assert streamed.created_at == made.created_at


def test_a_cursor_in_another_time_zone_gets_django_s_loader(monkeypatch) -> None:
    paris = zoneinfo.ZoneInfo("Europe/Paris")
    monkeypatch.setitem(
        connections["default"].__dict__, "timezone", paris
    )  # as if set since connecting
    value = _read("SELECT %s::timestamptz", ["2026-03-29 01:30:15.123456+00"])
    # Django's loader labels the connection's wall time with its zone (on a real connection
    # in that zone, which Django would have set, the instant is kept)
    assert value.tzinfo is paris
