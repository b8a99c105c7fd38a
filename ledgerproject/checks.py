"""System checks of the database the service runs on (``manage.py check --database default``;
``manage.py migrate`` runs them too).

Autovacuum: PostgreSQL plans a statement from the statistics ANALYZE gathers, and a statement
prepared on a kept connection (``PREPARE_THRESHOLD``) keeps its plan until the tables it reads
are analyzed again. Where nothing analyzes them, a plan made while the ledger's accounts were
few stays: the statement that reads a posting's accounts and locks their balances then visits
every balance of the ledger on each posting, and postings slow down as accounts are added (the
bench's ledger of 1,000 accounts took 188 s to fund that way instead of 16 s). Autovacuum
analyzes them as they grow; without it an operator must run ANALYZE on a schedule."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.core import checks
from django.db import connections

AUTOVACUUM_OFF = "ledger.W001"


def _statistics_settings(connection: Any) -> tuple[str, str]:
    """The server's ``autovacuum`` and ``track_counts`` (autovacuum needs both on)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('autovacuum'), current_setting('track_counts')")
        autovacuum, track_counts = cursor.fetchone()
    return str(autovacuum), str(track_counts)


@checks.register(checks.Tags.database)
def autovacuum_on(
    databases: Iterable[str] | None = None, **kwargs: Any
) -> list[checks.CheckMessage]:
    """A warning for each PostgreSQL database checked whose server does not analyze its tables
    by itself (``autovacuum`` or ``track_counts`` off)."""
    found: list[checks.CheckMessage] = []
    for alias in databases or ():
        connection = connections[alias]
        if connection.vendor == "postgresql":
            warning = autovacuum_warning(alias, *_statistics_settings(connection))
            if warning is not None:
                found.append(warning)
    return found


def autovacuum_warning(alias: str, autovacuum: str, track_counts: str) -> checks.Warning | None:
    if autovacuum == "on" and track_counts == "on":
        return None
    return checks.Warning(
        f"PostgreSQL of the database {alias!r} runs with autovacuum = {autovacuum} and "
        f"track_counts = {track_counts}: nothing analyzes the tables as they grow.",
        hint=(
            "Turn both on, or run ANALYZE on a schedule: the lists, reports and checks are "
            "planned from statistics, and a kept connection keeps a plan made while the "
            "tables were small (docs/OPERATORS.md)."
        ),
        id=AUTOVACUUM_OFF,
    )
