"""Every index on a tenant table is paid by every insert (a posting inserts a transaction and
its operations), so none may be redundant: no plain index whose columns begin another index
or the primary key (organization_id, id). Migration 0008 of transactions (and its siblings)
dropped the ones Django made for foreign keys, keeping the constraints."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.db import connection

from ledgerproject.tenancy import TENANT_TABLES
from tests.schema import constraints

pytestmark = pytest.mark.django_db


def _partial_names() -> set[str]:
    """Indexes and unique constraints with a condition: they cover only some rows."""
    names = set()
    for model in apps.get_models():
        for item in [*model._meta.indexes, *model._meta.constraints]:
            if getattr(item, "condition", None) is not None:
                names.add(item.name)
    return names


def _indexes(table: str) -> dict[str, dict]:
    found = constraints(table)
    return {
        name: info
        for name, info in found.items()
        if (info["index"] or info["primary_key"] or info["unique"]) and info["columns"]
    }


@pytest.mark.parametrize("table", TENANT_TABLES)
def test_no_plain_index_is_the_start_of_another(table: str) -> None:
    indexes = _indexes(table)
    partial = _partial_names()
    covering = [(name, info["columns"]) for name, info in indexes.items() if name not in partial]
    redundant = []
    for name, info in indexes.items():
        if info["unique"] or info["primary_key"] or name in partial:
            continue
        columns = info["columns"]
        for other, other_columns in covering:
            if other != name and other_columns[: len(columns)] == columns:
                redundant.append(f"{name} {columns} begins {other} {other_columns}")
    assert redundant == []


def test_the_posting_tables_keep_their_keys_and_the_indexes_they_need() -> None:
    operation = _indexes("transactions_operation")
    columns = sorted(tuple(info["columns"]) for info in operation.values())
    assert ("transaction_id",) in columns  # op_transaction_idx, declared
    assert ("account_id", "created_at") in columns
    assert ("organization_id",) not in columns
    found = constraints("transactions_operation")
    foreign = {tuple(info["columns"]) for info in found.values() if info["foreign_key"]}
    if connection.vendor == "postgresql":
        # The organization's own foreign key survives the dropped index.
        assert ("organization_id",) in foreign
    assert any("organization_id" in cols for cols in foreign)
