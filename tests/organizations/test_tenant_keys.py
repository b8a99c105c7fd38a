"""The tenant tables' composite keys (``ledgerproject.tenancy``), on PostgreSQL and on SQLite:
``(organization_id, id)`` primary keys, ``(organization_id, <x>_id)`` foreign keys between
tenant tables, the same for a foreign key added later, and the migration that converts a
database made with one-column keys, keeping its rows."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.apps import apps
from django.core.management import call_command
from django.db import connection, migrations, models
from django.db.backends.postgresql.schema import DatabaseSchemaEditor as StockPostgres
from django.db.backends.sqlite3.schema import DatabaseSchemaEditor as StockSqlite

from ledgerproject.tenancy import (
    ORGANIZATION,
    TENANT_TABLES,
    TenantKeys,
    constraint_names,
    drop_constraint,
    drop_foreign_keys,
    remake_table,
    tenant_foreign_keys,
)
from tests.transactions.conftest import Book, make_book


def _model(table: str) -> Any:
    return next(m for m in apps.get_models() if m._meta.db_table == table)


def _constraints(table: str) -> dict[str, dict]:
    with connection.cursor() as cursor:
        return connection.introspection.get_constraints(cursor, table)


def _tenant_key(table: str) -> list[str]:
    """The columns of the table's primary key, or of the unique key that stands for it (SQLite's
    auto-numbered idempotency keys)."""
    found = _constraints(table)
    if connection.vendor == "postgresql":
        for c in found.values():
            if c["primary_key"] and c["columns"] == [ORGANIZATION, "id"]:
                return c["columns"]
    for c in found.values():
        if c["unique"] and c["columns"] == [ORGANIZATION, "id"]:
            return c["columns"]
    if connection.vendor == "sqlite":  # an unnamed UNIQUE (...) is an automatic index there
        with connection.cursor() as cursor:
            cursor.execute('SELECT name FROM pragma_index_list(%s) WHERE "unique"', [table])
            for (index,) in cursor.fetchall():
                cursor.execute("SELECT name FROM pragma_index_info(%s) ORDER BY seqno", [index])
                columns = [row[0] for row in cursor.fetchall()]
                if columns == [ORGANIZATION, "id"]:
                    return columns
    if connection.vendor == "sqlite":  # its introspection lists key columns in table order
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT name FROM pragma_table_info(%s) WHERE pk > 0 ORDER BY pk", [table]
            )
            return [row[0] for row in cursor.fetchall()]
    return next(c["columns"] for c in found.values() if c["primary_key"])


def _foreign_keys(table: str) -> set[tuple[tuple[str, ...], str, tuple[str, ...]]]:
    """``(columns, referenced table, referenced columns)`` of every foreign key of the table."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT c.confrelid::regclass::text, "
                "ARRAY(SELECT attname FROM unnest(c.conkey) WITH ORDINALITY k(n, i) "
                "JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY i), "
                "ARRAY(SELECT attname FROM unnest(c.confkey) WITH ORDINALITY k(n, i) "
                "JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n ORDER BY i) "
                "FROM pg_constraint c WHERE c.contype = 'f' AND c.conrelid = %s::regclass",
                [table],
            )
            return {(tuple(cols), to, tuple(to_cols)) for to, cols, to_cols in cursor.fetchall()}
        cursor.execute("SELECT * FROM pragma_foreign_key_list(%s)", [table])
        keys: dict[int, list[tuple[str, str, str]]] = {}
        for row in cursor.fetchall():  # id, seq, table, from, to, ...
            keys.setdefault(row[0], []).append((row[2], row[3], row[4]))
        return {
            (tuple(f for _, f, _ in parts), parts[0][0], tuple(t for _, _, t in parts))
            for parts in keys.values()
        }


@pytest.mark.django_db
@pytest.mark.parametrize("table", TENANT_TABLES)
def test_every_tenant_table_is_keyed_by_organization_and_id(table):
    assert _tenant_key(table) == [ORGANIZATION, "id"]


@pytest.mark.django_db
@pytest.mark.parametrize("table", TENANT_TABLES)
def test_every_foreign_key_between_tenant_tables_carries_the_organization(table):
    model = _model(table)
    expected = {
        (
            (ORGANIZATION, field.column),
            field.target_field.model._meta.db_table,
            (ORGANIZATION, field.target_field.column),
        )
        for field in tenant_foreign_keys(model)
    }
    assert expected or table == "organizations_ledger"  # the others point at their ledger
    found = _foreign_keys(table)
    assert expected <= found
    one_column_to_tenant = [
        key for key in found if key[1] in TENANT_TABLES and key[0][0] != ORGANIZATION
    ]
    assert not one_column_to_tenant, one_column_to_tenant


@pytest.mark.django_db(transaction=True)  # SQLite's editor runs outside a transaction only
def test_a_foreign_key_added_to_a_tenant_table_is_composite_and_the_rows_stay(api, ledger_url):
    _funded_book(api, ledger_url)
    before = _counts()
    add = migrations.AddField(
        "operation",
        "portfolio_ref",
        models.ForeignKey("organizations.portfolio", null=True, on_delete=models.PROTECT),
    )
    old_state = _state()
    new_state = old_state.clone()
    add.state_forwards("transactions", new_state)
    with connection.schema_editor() as editor:
        add.database_forwards("transactions", editor, old_state, new_state)
    try:
        found = _foreign_keys("transactions_operation")
        assert (
            (ORGANIZATION, "portfolio_ref_id"),
            "organizations_portfolio",
            (ORGANIZATION, "id"),
        ) in found
        assert ((ORGANIZATION, "account_id"), "organizations_account", (ORGANIZATION, "id")) in (
            found
        )
        assert _tenant_key("transactions_operation") == [ORGANIZATION, "id"]
        assert _counts() == before
    finally:
        with connection.schema_editor() as editor:
            add.database_backwards("transactions", editor, new_state, old_state)
    assert "portfolio_ref_id" not in {column.name for column in _columns("transactions_operation")}


@pytest.mark.django_db(transaction=True)
def test_the_migration_converts_one_column_keys_and_keeps_the_rows(api, ledger_url):
    book = _funded_book(api, ledger_url)
    before = _counts()
    tenant_models = [_model(t) for t in TENANT_TABLES]
    _make_one_column_keys(tenant_models)
    assert _tenant_key("transactions_operation") == ["id"]

    with connection.schema_editor() as editor:
        TenantKeys().database_forwards("organizations", editor, None, _state())
    for table in TENANT_TABLES:
        assert _tenant_key(table) == [ORGANIZATION, "id"], table
    assert ((ORGANIZATION, "account_id"), "organizations_account", (ORGANIZATION, "id")) in (
        _foreign_keys("transactions_operation")
    )
    assert _counts() == before
    assert book.pay(100, 1).status_code == 201  # and it posts on the converted tables
    out = io.StringIO()
    call_command("check_ledger", stdout=out, stderr=io.StringIO())
    assert "OK" in out.getvalue()


def _funded_book(api: Any, ledger_url: str) -> Book:
    book = make_book(api, ledger_url)
    book.fund("@alice", 10_000)
    assert book.pay(2_500, 100).status_code == 201
    return book


def _columns(table: str) -> list[Any]:
    with connection.cursor() as cursor:
        return connection.introspection.get_table_description(cursor, table)


def _counts() -> dict[str, int]:
    with connection.cursor() as cursor:
        counts = {}
        for table in TENANT_TABLES:
            cursor.execute(f"SELECT count(*) FROM {table}")  # a constant list of tables
            counts[table] = cursor.fetchone()[0]
        return counts


def _state() -> Any:
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    return executor.loader.project_state()


def _make_one_column_keys(tenant_models: list[Any]) -> None:
    """The tables as Django's own backends made them before the composite keys."""
    if connection.vendor == "sqlite":
        with StockSqlite(connection) as editor:
            for model in tenant_models:
                remake_table(editor, model)
        return
    with StockPostgres(connection) as editor:
        drop_foreign_keys(editor, tenant_models)
        for model in tenant_models:
            for name in constraint_names(editor, model, "primary_key"):
                drop_constraint(editor, model, name)
            editor.execute(
                f"ALTER TABLE {model._meta.db_table} ADD PRIMARY KEY (id)"  # the model's table
            )
        for model in tenant_models:
            for field in model._meta.local_fields:
                if isinstance(field, models.ForeignKey):
                    to = field.target_field
                    editor.execute(
                        f"ALTER TABLE {model._meta.db_table} ADD FOREIGN KEY ({field.column}) "
                        f"REFERENCES {to.model._meta.db_table} ({to.column})"
                    )
