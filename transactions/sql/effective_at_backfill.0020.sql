-- Before effective dates, every posting took effect when it was posted. Operations are
-- append-only (operation_append_only): the guard is set aside for this one statement, inside
-- the migration's own transaction, so no other writer can slip an UPDATE through meanwhile.
-- Citus asks for this before a trigger of a distributed table is changed (a database
-- distributed before this migration); plain PostgreSQL keeps it as a setting of no use.
SET LOCAL citus.enable_unsafe_triggers TO on;
UPDATE transactions_transaction SET effective_at = created_at WHERE effective_at IS NULL;
ALTER TABLE transactions_operation DISABLE TRIGGER operation_append_only;
UPDATE transactions_operation SET effective_at = created_at WHERE effective_at IS NULL;
ALTER TABLE transactions_operation ENABLE TRIGGER operation_append_only;
