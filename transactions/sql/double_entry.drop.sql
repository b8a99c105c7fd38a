SET LOCAL citus.enable_unsafe_triggers TO on;
DROP TRIGGER IF EXISTS balance_kept ON organizations_balance;
DROP TRIGGER IF EXISTS balance_double_entry ON organizations_balance;
DROP TRIGGER IF EXISTS operation_double_entry ON transactions_operation;
DROP FUNCTION IF EXISTS ledger_balance_double_entry();
DROP FUNCTION IF EXISTS ledger_operation_double_entry();
DROP FUNCTION IF EXISTS ledger_balance_is_head(uuid, uuid);
