-- The SQL ceiling: the same 2-leg transfer as the reference floor, straight from pgbench
-- (pgbench -n -f bench/pgbench_transfer.sql -D ledger=<uuid> -D accounts=<n>): the two balance
-- rows locked in id order, the transaction, its two operations, and the two balance updates.
\set a random(1, :accounts)
\set d random(1, :accounts - 1)
\set b 1 + ((:a - 1 + :d) % :accounts)
\set amount random(1, 100)
BEGIN;
WITH locked AS (
  SELECT b.id, b.account_id, b.organization_id, a.alias, b.available, b.on_hold, b.scale,
         b.version
  FROM organizations_balance b JOIN organizations_account a ON a.id = b.account_id
  WHERE a.ledger_id = ':ledger' AND a.alias IN ('@b' || :a, '@b' || :b) AND a.deleted_at IS NULL
  ORDER BY b.id FOR UPDATE OF b
)
SELECT s.id AS s_id, s.account_id AS s_account, s.organization_id AS org, s.available AS s_available,
       s.on_hold AS s_on_hold, s.version AS s_version,
       d.id AS d_id, d.account_id AS d_account, d.available AS d_available,
       d.on_hold AS d_on_hold, d.version AS d_version
FROM locked s, locked d WHERE s.alias = '@b' || :a AND d.alias = '@b' || :b
\gset
INSERT INTO transactions_transaction (id, created_at, updated_at, organization_id, ledger_id,
  parent_id, is_reversal, template_id, type, description, status, amount, scale, asset_code,
  chart_of_accounts_group_name, source, destination, metadata, legs, effective_at)
VALUES (gen_random_uuid(), now(), now(), ':org', ':ledger', NULL, false, NULL, 'PGBENCH', NULL,
  'SENT', :amount, 2, 'BRL', 'BENCH', jsonb_build_array('@b' || :a),
  jsonb_build_array('@b' || :b), '{}',
  jsonb_build_array(
    jsonb_build_object('accountId', ':s_account', 'alias', '@b' || :a, 'portfolioId', NULL,
      'direction', 'DEBIT', 'amount', :amount, 'description', '', 'chartOfAccounts', ''),
    jsonb_build_object('accountId', ':d_account', 'alias', '@b' || :b, 'portfolioId', NULL,
      'direction', 'CREDIT', 'amount', :amount, 'description', '', 'chartOfAccounts', '')),
  now())
RETURNING id AS tx
\gset
INSERT INTO transactions_operation (id, created_at, updated_at, organization_id, ledger_id,
  transaction_id, account_id, account_alias, portfolio_id, type, effect, asset_code,
  chart_of_accounts, description, amount, scale, balance_available, balance_on_hold,
  balance_scale, balance_available_after, balance_on_hold_after, balance_scale_after,
  balance_version, metadata, effective_at)
VALUES
  (gen_random_uuid(), now(), now(), ':org', ':ledger', ':tx', ':s_account', '@b' || :a, NULL,
   'DEBIT', 'POST', 'BRL', '', '', :amount, 2, :s_available, :s_on_hold, 2,
   :s_available - :amount, :s_on_hold, 2, :s_version + 1, '{}', now()),
  (gen_random_uuid(), now(), now(), ':org', ':ledger', ':tx', ':d_account', '@b' || :b, NULL,
   'CREDIT', 'POST', 'BRL', '', '', :amount, 2, :d_available, :d_on_hold, 2,
   :d_available + :amount, :d_on_hold, 2, :d_version + 1, '{}', now());
UPDATE organizations_balance SET available = available - :amount, version = version + 1,
  updated_at = now() WHERE id = ':s_id';
UPDATE organizations_balance SET available = available + :amount, version = version + 1,
  updated_at = now() WHERE id = ':d_id';
COMMIT;
