"""The constraints and indexes of a table, as the database has them."""

from __future__ import annotations

from typing import Any

from django.db import connection


def constraints(table: str) -> dict[str, dict[str, Any]]:
    """Django's introspection, with one correction: on SQLite it lists a composite primary key's
    columns in the table's column order, not the key's; here they are in the key's order (the
    order of the index SQLite keeps for it), as on PostgreSQL."""
    with connection.cursor() as cursor:
        found = connection.introspection.get_constraints(cursor, table)
        primary = found.get("__primary__")
        if connection.vendor == "sqlite" and primary and len(primary["columns"]) > 1:
            cursor.execute(f'PRAGMA table_info("{table}")')
            positions = {row[1]: row[5] for row in cursor.fetchall()}
            primary["columns"] = sorted(primary["columns"], key=positions.__getitem__)
    return found
