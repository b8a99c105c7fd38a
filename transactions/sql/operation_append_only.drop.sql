DROP TRIGGER IF EXISTS operation_append_only ON transactions_operation;
DROP FUNCTION IF EXISTS transactions_operation_append_only();
