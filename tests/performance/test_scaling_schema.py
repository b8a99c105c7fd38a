"""What distributing the tenant tables by ``organization_id`` (Citus, docs/SCALING.md) needs of
the schema today, read from the database itself: every table with an ``organization_id`` has an
index that starts with it, and every unique constraint or unique index on such a table, other
than its primary key, includes it."""

from __future__ import annotations

import pytest
from django.apps import apps

from tests.schema import constraints

pytestmark = pytest.mark.django_db

# Tables that hold no tenant's data: reference tables (replicated to every node) and the
# coordinator's own (API tokens reach across organizations; Django's auth and admin).
NOT_TENANT = {"organizations_apitoken"}


def _tenant_tables() -> list[str]:
    """Every table, Django's and the many-to-many ones included, with an organization_id."""
    tables = {
        model._meta.db_table
        for model in apps.get_models(include_auto_created=True)
        if any(f.column == "organization_id" for f in model._meta.concrete_fields)
    }
    return sorted(tables - NOT_TENANT)


def _constraints(table: str) -> dict[str, dict]:
    return constraints(table)


def test_the_tenant_tables_are_the_expected_ones():
    expected = {
        "instruments_instrument",
        "instruments_rate",
        "organizations_account",
        "organizations_apitoken_organizations",
        "organizations_ledger",
        "organizations_portfolio",
        "organizations_product",
        "templates_dsl_transactiontemplate",
        "organizations_balance",
        "transactions_idempotencykey",
        "transactions_operation",
        "transactions_transaction",
    }
    assert expected <= set(_tenant_tables())


@pytest.mark.parametrize("table", _tenant_tables())
def test_every_tenant_table_has_an_index_led_by_organization_id(table):
    # The primary key (organization_id, id) counts: it is an index on both databases (SQLite
    # backs a key that is not an integer with an automatic unique index), and the plain
    # organization_id index it made redundant is gone (tests/transactions/test_indexes.py).
    leading = [
        name
        for name, c in _constraints(table).items()
        if (c["index"] or c["unique"] or c["primary_key"])
        and c["columns"]
        and c["columns"][0] == "organization_id"
    ]
    assert leading, f"{table} has no index starting with organization_id"


@pytest.mark.parametrize("table", _tenant_tables())
def test_every_unique_constraint_of_a_tenant_table_includes_organization_id(table):
    missing = [
        f"{name} {c['columns']}"
        for name, c in _constraints(table).items()
        if c["unique"] and not c["primary_key"] and "organization_id" not in c["columns"]
    ]
    assert not missing, f"{table}: unique without organization_id: {missing}"
