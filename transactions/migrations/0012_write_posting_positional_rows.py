"""``ledger_write_posting`` again: each row arrives as a JSON array of its values in column
order, not as an object keyed by column name.

The objects' keys were most of what the service built and sent for a posting's rows, and most
of what PostgreSQL parsed and sorted (a ``jsonb`` object keeps its keys sorted) before
``jsonb_to_recordset`` looked each one up again. Reading a value by its position is a direct
index into the array. Measured on one posting's four documents, 20,000 times: 71 to 73 us of
PostgreSQL's time with objects, 60 us with arrays (docs/PERFORMANCE.md). A JSON ``null`` in a
``jsonb`` column is stored as SQL NULL, as ``jsonb_to_recordset`` stored it.

The column order is this migration's (``COLUMNS``); ``transactions.writes`` sends each table's
values in the same order, which tests/performance/test_write_positions.py holds. Signature,
guard, the usual posting's balance update and its row count check are those of 0010."""

import importlib

from django.db import migrations

from ledgerproject.db import postgresql_only

PREVIOUS = importlib.import_module("transactions.migrations.0010_write_posting_balance_index")
SIGNATURE = PREVIOUS.SIGNATURE  # CREATE ... AS $$, unchanged

# Each table's columns, in the order a row's values arrive, with the type each is read as.
COLUMNS = {
    "transactions_transaction": (
        ("id", "uuid"), ("created_at", "timestamptz"), ("updated_at", "timestamptz"),
        ("organization_id", "uuid"), ("ledger_id", "uuid"), ("parent_id", "uuid"),
        ("is_reversal", "boolean"), ("template_id", "uuid"), ("type", "varchar"),
        ("description", "text"), ("status", "varchar"), ("amount", "numeric"),
        ("scale", "smallint"), ("asset_code", "varchar"),
        ("chart_of_accounts_group_name", "varchar"), ("source", "jsonb"),
        ("destination", "jsonb"), ("metadata", "jsonb"), ("legs", "jsonb"),
        ("expires_at", "timestamptz"),
    ),
    "transactions_operation": (
        ("id", "uuid"), ("created_at", "timestamptz"), ("updated_at", "timestamptz"),
        ("organization_id", "uuid"), ("ledger_id", "uuid"), ("transaction_id", "uuid"),
        ("account_id", "uuid"), ("account_alias", "varchar"), ("portfolio_id", "uuid"),
        ("type", "varchar"), ("effect", "varchar"), ("asset_code", "varchar"),
        ("chart_of_accounts", "varchar"), ("description", "text"), ("amount", "numeric"),
        ("scale", "smallint"), ("balance_available", "numeric"),
        ("balance_on_hold", "numeric"), ("balance_scale", "smallint"),
        ("balance_available_after", "numeric"), ("balance_on_hold_after", "numeric"),
        ("balance_scale_after", "smallint"), ("balance_version", "bigint"),
        ("metadata", "jsonb"),
    ),
    "outbox_event": (
        ("event_id", "uuid"), ("type", "varchar"), ("organization_id", "uuid"),
        ("ledger_id", "uuid"), ("resource_id", "uuid"), ("created_at", "timestamptz"),
        ("data", "jsonb"),
    ),
    "organizations_balance": (
        ("id", "uuid"), ("available", "numeric"), ("on_hold", "numeric"),
        ("scale", "smallint"), ("overdraft_limit", "numeric"), ("version", "bigint"),
        ("updated_at", "timestamptz"),
    ),
}  # fmt: skip


def _values(table: str) -> str:
    """The columns of ``table`` read from a row array ``r``, each named as its column."""
    out = []
    for index, (name, kind) in enumerate(COLUMNS[table]):
        value = f"NULLIF(r->{index}, 'null')" if kind == "jsonb" else f"(r->>{index})::{kind}"
        out.append(f"{value} AS {name}")
    return ",\n        ".join(out)


def _insert(table: str, rows: str) -> str:
    names = ", ".join(name for name, _ in COLUMNS[table])
    return (
        f"    INSERT INTO {table} ({names})\n"
        f"    SELECT {_values(table)}\n"
        f"    FROM jsonb_array_elements({rows}) AS r;\n"
    )


BALANCES = f"(SELECT {_values('organizations_balance')}\n    FROM jsonb_array_elements(p_balances) AS r)"
SET = (
    "SET available = v.available, on_hold = v.on_hold, scale = v.scale,\n"
    "        overdraft_limit = v.overdraft_limit, version = v.version, updated_at = v.updated_at"
)

CREATE = f"""{SIGNATURE}DECLARE
    usual boolean := cardinality(p_assets) = 1 AND cardinality(p_accounts) <= 2;
    updated bigint;
BEGIN
    IF usual THEN
        IF NOT ({PREVIOUS.PREVIOUS_MIGRATION.USUAL}
        ) THEN
            RETURN false;
        END IF;
    ELSIF NOT ({PREVIOUS.PREVIOUS_MIGRATION.ANY}
    ) THEN
        RETURN false;
    END IF;
{_insert("transactions_transaction", "p_transactions")}\
{_insert("transactions_operation", "p_operations")}\
{_insert("outbox_event", "p_events")}\
    IF usual THEN
        UPDATE organizations_balance AS b
        {SET}
        FROM {BALANCES} AS v
        WHERE b.organization_id = p_org AND b.account_id IN (p_accounts[1], p_accounts[2])
          AND b.id = v.id;
        GET DIAGNOSTICS updated = ROW_COUNT;
        IF updated <> jsonb_array_length(p_balances) THEN
            RAISE EXCEPTION 'ledger_write_posting: % of % balances updated', updated,
                jsonb_array_length(p_balances);
        END IF;
    ELSE
        UPDATE organizations_balance AS b
        {SET}
        FROM {BALANCES} AS v
        WHERE b.organization_id = p_org AND b.id = v.id;
    END IF;
    RETURN true;
END;
$$;
"""


class Migration(migrations.Migration):
    dependencies = [("transactions", "0011_key_answer_inline")]

    operations = [postgresql_only(CREATE, PREVIOUS.CREATE)]
