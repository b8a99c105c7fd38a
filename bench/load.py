"""Bulk-load transfers into the bench ledger through SQL (``INSERT ... SELECT`` over
``generate_series``: a million in a minute), each as the TRANSFER template would post it: one
SENT transaction, a DEBIT and a CREDIT operation between two of ``@b1`` .. ``@bN``. Window
functions give each operation its account's running balance and version from where the balance
stood, and the balances end where the operations do, so ``check_ledger`` passes. The balances
are locked first, as a posting would, and read once locked."""

from __future__ import annotations

from typing import Any

from django.db import connection, transaction

LOCK = """
SELECT count(*) FILTER (WHERE scale <> 2) FROM (
  SELECT b.id, b.scale FROM organizations_balance b JOIN organizations_account a
  ON a.id = b.account_id WHERE a.ledger_id = %(ledger)s AND a.alias LIKE '@b%%'
  ORDER BY b.id FOR UPDATE OF b
) locked
"""
STEPS = [
    "SET LOCAL work_mem = '256MB'",
    "SELECT setseed(0.42)",
    """
    CREATE TEMP TABLE bench_account ON COMMIT DROP AS
    SELECT n, a.id AS account_id, a.alias, b.id AS balance_id, b.organization_id, b.available,
      b.on_hold, b.scale, b.version
    FROM generate_series(1, %(accounts)s) n JOIN organizations_account a
      ON a.ledger_id = %(ledger)s AND a.alias = '@b' || n AND a.deleted_at IS NULL
    JOIN organizations_balance b ON b.account_id = a.id
    """,
    """
    CREATE TEMP TABLE bench_load ON COMMIT DROP AS
    SELECT i, src, dst, amount, created_at,
      (lpad(to_hex((extract(epoch FROM created_at) * 1000)::bigint), 12, '0') || '7000' || '8'
       || lpad(to_hex(i %% 4096), 3, '0') || lpad(to_hex(i), 12, '0'))::uuid AS id
    FROM (
      SELECT i, src, 1 + ((src - 1 + hop) %% %(accounts)s) AS dst, amount,
        now() + i * interval '1 microsecond' AS created_at
      FROM (SELECT i, 1 + floor(random() * %(accounts)s)::int AS src,
              1 + floor(random() * (%(accounts)s - 1))::int AS hop,
              1 + floor(random() * 100)::bigint AS amount
            FROM generate_series(1, %(transactions)s) i) r
    ) t
    """,
    """
    CREATE TEMP TABLE bench_leg ON COMMIT DROP AS
    SELECT l.i, l.leg, l.n, l.amount, l.delta, l.created_at, l.tx_id, acc.account_id, acc.alias,
      acc.organization_id, acc.on_hold, acc.scale,
      acc.available + sum(l.delta) OVER w - l.delta AS before,
      acc.available + sum(l.delta) OVER w AS after, acc.version + row_number() OVER w AS version
    FROM (SELECT i, 0 AS leg, src AS n, amount, -amount AS delta, created_at, id AS tx_id
          FROM bench_load
          UNION ALL SELECT i, 1, dst, amount, amount, created_at, id FROM bench_load) l
    JOIN bench_account acc ON acc.n = l.n WINDOW w AS (PARTITION BY l.n ORDER BY l.i, l.leg)
    """,
    """
    INSERT INTO transactions_transaction (id, created_at, updated_at, organization_id, ledger_id,
      parent_id, is_reversal, template_id, type, description, status, amount, scale, asset_code,
      chart_of_accounts_group_name, source, destination, metadata, legs, effective_at)
    SELECT l.id, l.created_at, l.created_at, s.organization_id, %(ledger)s, NULL, false,
      (SELECT id FROM templates_dsl_transactiontemplate
       WHERE ledger_id = %(ledger)s AND code = 'TRANSFER'), 'TRANSFER', NULL, 'SENT', l.amount,
      2, 'BRL', 'BENCH', jsonb_build_array(s.alias), jsonb_build_array(d.alias), '{}',
      jsonb_build_array(
        jsonb_build_object('accountId', s.account_id, 'alias', s.alias, 'portfolioId', NULL,
          'direction', 'DEBIT', 'amount', l.amount, 'description', '', 'chartOfAccounts', 'DEBIT'),
        jsonb_build_object('accountId', d.account_id, 'alias', d.alias, 'portfolioId', NULL,
          'direction', 'CREDIT', 'amount', l.amount, 'description', '',
          'chartOfAccounts', 'CREDIT')), l.created_at
    FROM bench_load l JOIN bench_account s ON s.n = l.src JOIN bench_account d ON d.n = l.dst
    ORDER BY l.i
    """,
    """
    INSERT INTO transactions_operation (id, created_at, updated_at, organization_id, ledger_id,
      transaction_id, account_id, account_alias, portfolio_id, type, effect, asset_code,
      chart_of_accounts, description, amount, scale, balance_available, balance_on_hold,
      balance_scale, balance_available_after, balance_on_hold_after, balance_scale_after,
      balance_version, metadata, effective_at)
    SELECT (lpad(to_hex((extract(epoch FROM created_at) * 1000)::bigint), 12, '0') || '7000'
        || '9' || lpad(to_hex(leg), 3, '0') || lpad(to_hex(i), 12, '0'))::uuid,
      created_at, created_at, organization_id, %(ledger)s, tx_id, account_id, alias, NULL,
      CASE leg WHEN 0 THEN 'DEBIT' ELSE 'CREDIT' END, 'POST', 'BRL',
      CASE leg WHEN 0 THEN 'DEBIT' ELSE 'CREDIT' END, '', amount, 2, before, on_hold, scale,
      after, on_hold, scale, version, '{}', created_at
    FROM bench_leg ORDER BY i, leg
    """,
    """
    UPDATE organizations_balance b SET available = acc.available + t.moved,
      version = acc.version + t.legs, updated_at = clock_timestamp()
    FROM (SELECT n, sum(delta) AS moved, count(*) AS legs FROM bench_leg GROUP BY n) t
    JOIN bench_account acc ON acc.n = t.n WHERE b.id = acc.balance_id
    """,
]
TABLES = ("transactions_transaction", "transactions_operation", "organizations_balance")


def bulk_load(*, ledger_id: str, accounts: int, transactions: int) -> None:
    """Load ``transactions`` transfers between ``@b1`` .. ``@b<accounts>`` (all at scale 2)."""
    params: dict[str, Any] = {
        "ledger": ledger_id,
        "accounts": accounts,
        "transactions": transactions,
    }
    with transaction.atomic(durable=True), connection.cursor() as cursor:
        cursor.execute(LOCK, params)  # first, as a posting would; read once locked
        if cursor.fetchone()[0]:
            raise RuntimeError("the loader expects every @b account at scale 2")
        for step in STEPS:
            cursor.execute(step, params)
    # Settle before measuring: statistics for the planner, the visibility map set (so that
    # autovacuum does not wake up mid-scenario) and the loaded pages flushed by a checkpoint.
    with connection.cursor() as cursor:
        for statement in (*(f"VACUUM (ANALYZE) {table}" for table in TABLES), "CHECKPOINT"):
            cursor.execute(statement)
