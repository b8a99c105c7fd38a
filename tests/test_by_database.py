"""``db.by_database``: the one place that asks which database the process runs on."""

from __future__ import annotations

import pytest
from django.db import DEFAULT_DB_ALIAS, connection, connections

from ledgerproject.db import by_database


def _postgresql(value: int) -> tuple[str, int]:
    """The PostgreSQL form's docstring."""
    return "postgresql", value


def _sqlite(value: int) -> tuple[str, int]:
    return "sqlite", value


def test_the_form_of_the_process_database_is_chosen_once(monkeypatch: pytest.MonkeyPatch):
    chosen = by_database(postgresql=_postgresql, sqlite=_sqlite)
    vendor = connection.vendor
    assert chosen(1) == (vendor, 1)
    other = "sqlite" if vendor == "postgresql" else "postgresql"
    monkeypatch.setattr(type(connections[DEFAULT_DB_ALIAS]), "vendor", other)
    assert chosen(2) == (vendor, 2)  # not asked again
    assert by_database(postgresql=_postgresql, sqlite=_sqlite)(3) == (other, 3)
    assert chosen.__doc__ == _postgresql.__doc__
