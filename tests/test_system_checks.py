"""The project's system checks (``ledgerproject.checks``): ``manage.py check --database default``
and ``manage.py migrate`` warn when PostgreSQL does not analyze the tables by itself."""

from __future__ import annotations

import pytest
from django.core import checks
from django.db import connection

from ledgerproject.checks import AUTOVACUUM_OFF, autovacuum_warning


def _server_analyzes() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SHOW autovacuum")
        autovacuum = cursor.fetchone()[0]
        cursor.execute("SHOW track_counts")
        return autovacuum == "on" and cursor.fetchone()[0] == "on"


@pytest.mark.django_db
def test_it_warns_about_the_database_as_its_server_is_set():
    """Registered as a database check: it reads the server it is asked about (PostgreSQL), and
    has nothing to say of SQLite, which has no autovacuum and plans every statement afresh."""
    found = [m.id for m in checks.run_checks(tags=[checks.Tags.database], databases=["default"])]
    warned = connection.vendor == "postgresql" and not _server_analyzes()
    assert (AUTOVACUUM_OFF in found) == warned


def test_it_reads_no_database_unless_asked():
    """Commands other than ``check --database`` and ``migrate`` run the checks with no database:
    nothing is read (no test database is allowed here)."""
    assert checks.run_checks(tags=[checks.Tags.database]) == []


@pytest.mark.parametrize(
    ("autovacuum", "track_counts", "warned"),
    [("on", "on", False), ("off", "on", True), ("on", "off", True), ("off", "off", True)],
)
def test_it_warns_unless_both_settings_are_on(autovacuum, track_counts, warned):
    warning = autovacuum_warning("default", autovacuum, track_counts)
    assert (warning is not None) == warned
    if warning is not None:
        assert warning.id == AUTOVACUUM_OFF
        assert warning.level == checks.WARNING
        assert f"autovacuum = {autovacuum}" in warning.msg
        assert "ANALYZE" in (warning.hint or "")
