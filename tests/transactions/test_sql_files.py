"""The functions and triggers in the database are the current versions of their files in
``<app>/sql/``: what a reader finds there is what runs."""

from __future__ import annotations

import re

import pytest
from django.db import connection

from ledgerproject.migration_ops import current_sql, sql_text

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.django_db,
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="the functions and triggers are PostgreSQL's"
    ),
]


def _body(text: str) -> str:
    return re.search(r"AS \$\$\n(.*?)\$\$", text, re.S).group(1)


def _installed(function: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT prosrc FROM pg_proc WHERE proname = %s", [function])
        (source,) = cursor.fetchone()
    return source.lstrip("\n")


@pytest.mark.parametrize(
    ("function", "text"),
    [
        ("ledger_write_posting", lambda: current_sql("transactions", "ledger_write_posting")),
        (
            "transactions_operation_append_only",
            lambda: sql_text("transactions", "operation_append_only.sql"),
        ),
        ("organizations_auth_epoch_bump", lambda: sql_text("organizations", "auth_epoch_bump.sql")),
    ],
)
def test_the_installed_function_is_its_current_file(function, text):
    assert _installed(function) == _body(text()).lstrip("\n")


def test_a_dropped_function_is_not_installed():
    """``ledger_write_posting_or_refuse`` (migration 0014) went with the write that carried its
    COMMIT (0015)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_proc WHERE proname = 'ledger_write_posting_or_refuse'"
        )
        assert cursor.fetchone() == (0,)
