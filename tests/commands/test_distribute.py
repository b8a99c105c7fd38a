"""``manage.py distribute`` on a database without Citus: a clear refusal, nothing changed.
(On a Citus cluster: tests/citus.)"""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from ledgerproject.tenancy import TENANT_TABLES

pytestmark = pytest.mark.django_db


def test_it_refuses_a_database_without_citus():
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1 FROM pg_extension WHERE extname = 'citus'")
            if cursor.fetchone():
                pytest.fail("this test expects a database without Citus")
    before = _keys()
    with pytest.raises(CommandError, match="no Citus extension"):
        call_command("distribute")
    assert _keys() == before


def _keys() -> dict:
    with connection.cursor() as cursor:
        return {t: connection.introspection.get_constraints(cursor, t) for t in TENANT_TABLES}
