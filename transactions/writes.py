"""The SQL of a posting: new transactions, their operations and the new balances, written
provided that the guard (``guards.Guard``) still holds.

On PostgreSQL all of it is one statement: a data-modifying CTE whose every part is conditioned
on the guard, read with a snapshot taken after the balance locks (and holding the ledger with
``FOR KEY SHARE``). So the balance locks are held for three round trips only: lock, write,
commit. Elsewhere (SQLite, whose writers are serialized anyway) the guard is one query per asset
plus one, then three plain statements."""

from __future__ import annotations

from typing import Any

from django.db import connection

from ledgerproject.db import field_of
from organizations.models import Balance
from transactions.guards import Guard, guard_refusal
from transactions.models import Operation, Transaction

TRANSACTION_COLUMNS = (
    "id", "created_at", "updated_at", "organization_id", "ledger_id", "parent_id", "is_reversal",
    "template_id", "type", "description", "status", "amount", "scale", "asset_code",
    "chart_of_accounts_group_name", "source", "destination", "metadata", "legs",
)  # fmt: skip
OPERATION_COLUMNS = (
    "id", "created_at", "updated_at", "organization_id", "ledger_id", "transaction_id",
    "account_id", "account_alias", "portfolio_id", "type", "effect", "asset_code",
    "chart_of_accounts", "description", "amount", "scale", "balance_available",
    "balance_on_hold", "balance_scale", "balance_available_after", "balance_on_hold_after",
    "balance_scale_after", "balance_version", "metadata",
)  # fmt: skip
BALANCE_STATE = ("available", "on_hold", "scale", "version", "updated_at")

WRITE_POSTING = """
WITH guard AS (
  SELECT %s::boolean OR (
    (SELECT count(*) FROM instruments_instrument
      WHERE ledger_id = %s AND code = ANY(%s::varchar[]) AND deleted_at IS NULL)
      = cardinality(%s::varchar[])
    AND NOT EXISTS (SELECT 1 FROM organizations_account
      WHERE id = ANY(%s::uuid[]) AND deleted_at IS NOT NULL)
    AND EXISTS (SELECT 1 FROM organizations_ledger
      WHERE id = %s AND deleted_at IS NULL FOR KEY SHARE)) AS ok
), new_transactions AS (
INSERT INTO transactions_transaction (id, created_at, updated_at, organization_id, ledger_id,
  parent_id, is_reversal, template_id, type, description, status, amount, scale, asset_code,
  chart_of_accounts_group_name, source, destination, metadata, legs)
SELECT * FROM unnest(%s::uuid[], %s::timestamptz[], %s::timestamptz[], %s::uuid[], %s::uuid[],
  %s::uuid[], %s::boolean[], %s::uuid[], %s::varchar[], %s::text[], %s::varchar[],
  %s::numeric[], %s::smallint[], %s::varchar[], %s::varchar[], %s::jsonb[], %s::jsonb[],
  %s::jsonb[], %s::jsonb[])
WHERE (SELECT ok FROM guard)
), new_operations AS (
INSERT INTO transactions_operation (id, created_at, updated_at, organization_id, ledger_id,
  transaction_id, account_id, account_alias, portfolio_id, type, effect, asset_code,
  chart_of_accounts, description, amount, scale, balance_available, balance_on_hold,
  balance_scale, balance_available_after, balance_on_hold_after, balance_scale_after,
  balance_version, metadata)
SELECT * FROM unnest(%s::uuid[], %s::timestamptz[], %s::timestamptz[], %s::uuid[], %s::uuid[],
  %s::uuid[], %s::uuid[], %s::varchar[], %s::uuid[], %s::varchar[], %s::varchar[],
  %s::varchar[], %s::varchar[], %s::text[], %s::numeric[], %s::smallint[], %s::numeric[],
  %s::numeric[], %s::smallint[], %s::numeric[], %s::numeric[], %s::smallint[], %s::bigint[],
  %s::jsonb[])
WHERE (SELECT ok FROM guard)
)
UPDATE organizations_balance AS b
SET available = v.available, on_hold = v.on_hold, scale = v.scale, version = v.version,
    updated_at = v.updated_at
FROM unnest(%s::uuid[], %s::numeric[], %s::numeric[], %s::smallint[], %s::bigint[],
            %s::timestamptz[]) AS v(id, available, on_hold, scale, version, updated_at)
WHERE b.id = v.id AND (SELECT ok FROM guard)
"""
UPDATE_BALANCE = (
    "UPDATE organizations_balance SET available = %s, on_hold = %s, scale = %s, version = %s, "
    "updated_at = %s WHERE id = %s"
)


def _column_values(obj: Any, columns: tuple[str, ...]) -> list[Any]:
    """What ``Model.save`` would send for ``obj``: each field's ``pre_save`` (``auto_now``
    stamps ``updated_at``) then its database value."""
    by_column = {f.column: f for f in type(obj)._meta.concrete_fields}
    return [
        by_column[c].get_db_prep_save(by_column[c].pre_save(obj, True), connection) for c in columns
    ]


def _column_arrays(rows: list[Any], columns: tuple[str, ...]) -> list[list[Any]]:
    """The rows as one array per column, for ``INSERT ... SELECT * FROM unnest(...)``."""
    values = [_column_values(row, columns) for row in rows]
    for row in rows:
        row._state.adding = False
    return [[row[i] for row in values] for i in range(len(columns))]


def _balance_arrays(rows: list[Balance]) -> list[list[Any]]:
    return [[getattr(b, n) for b in rows] for n in ("pk", *BALANCE_STATE)]


def write_posting(
    transactions: list[Transaction],
    operations: list[Operation],
    balances: list[Balance],
    *,
    guard: Guard,
) -> bool:
    """Write it all if the guard holds; answer whether it did (nothing is written otherwise)."""
    if connection.vendor != "postgresql":
        if guard_refusal(guard) is not None:
            return False
        Transaction.objects.bulk_create(transactions)
        Operation.objects.bulk_create(operations)
        _update_balances(balances)
        return True
    assets = list(guard.assets)
    with connection.cursor() as cursor:
        cursor.execute(
            WRITE_POSTING,
            [
                False,
                guard.ledger_id,
                assets,
                assets,
                list(guard.account_ids),
                guard.ledger_id,
                *_column_arrays(transactions, TRANSACTION_COLUMNS),
                *_column_arrays(operations, OPERATION_COLUMNS),
                *_balance_arrays(balances),
            ],
        )
        return cursor.rowcount > 0


def _update_balances(rows: list[Balance]) -> None:
    """One prepared statement run for each locked balance row (off PostgreSQL)."""
    fields = [field_of(Balance, name) for name in BALANCE_STATE]
    pk = Balance._meta.pk
    assert pk is not None
    with connection.cursor() as cursor:
        cursor.executemany(
            UPDATE_BALANCE,
            [
                [f.get_db_prep_save(getattr(b, f.attname), connection) for f in fields]
                + [pk.get_db_prep_save(b.pk, connection)]
                for b in rows
            ],
        )
