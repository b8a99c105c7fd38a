"""Django's PostgreSQL backend, whose schema editor writes the tenant keys, and which reads
timestamps with psycopg's own loader."""

from __future__ import annotations

import datetime as dt
from typing import Any

import psycopg
from django.db.backends.postgresql import base, schema
from psycopg import adapt
from psycopg.pq import Format
from psycopg.types.datetime import TimestamptzLoader

from ledgerproject.tenancy import TenantKeysSchemaMixin


class DatabaseSchemaEditor(TenantKeysSchemaMixin, schema.DatabaseSchemaEditor):
    pass


def _psycopg_loader() -> type[Any]:
    """The class psycopg loads ``timestamptz`` text with: its C loader when it has one (the
    one an adapters map puts in place of ``TimestamptzLoader``), else that class itself."""
    probe = adapt.AdaptersMap(psycopg.adapters)
    probe.register_loader("timestamptz", TimestamptzLoader)
    found = probe.get_loader(probe.types["timestamptz"].oid, Format.TEXT)
    assert found is not None
    return found


_PSYCOPG_LOADER = _psycopg_loader()


class UtcTimestamptzLoader:
    """psycopg's own ``timestamptz`` loader, as Django sees it. Django registers a loader of
    its own, written in Python, that puts its time zone on each value: most of the client work
    of reading the posting's locking statement. On a connection
    in UTC (Django sets every connection's time zone) psycopg's loader makes the same values,
    in ``datetime.UTC``. A C class cannot be subclassed, so this stands for it: Django reads
    ``timezone`` off the class it finds (and registers its own on a cursor whose time zone
    differs), and psycopg gets an instance of its own loader when it makes one."""

    format = Format.TEXT
    timezone = dt.UTC

    def __new__(cls, oid: int, context: Any = None) -> Any:
        return _PSYCOPG_LOADER(oid, context)


class DatabaseWrapper(base.DatabaseWrapper):
    SchemaEditorClass = DatabaseSchemaEditor

    def get_connection_params(self) -> dict[str, Any]:
        params = super().get_connection_params()
        context = params.get("context")  # Django's adapters template, kept by the process
        if context is not None and self.timezone is dt.UTC:
            oid = context.types["timestamptz"].oid
            if context.get_loader(oid, Format.TEXT) is not UtcTimestamptzLoader:
                context.register_loader("timestamptz", UtcTimestamptzLoader)  # once
        return params
