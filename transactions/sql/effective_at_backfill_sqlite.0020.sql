-- Before effective dates, every posting took effect when it was posted (SQLite has no
-- append-only trigger on operations to set aside).
UPDATE transactions_transaction SET effective_at = created_at WHERE effective_at IS NULL;
UPDATE transactions_operation SET effective_at = created_at WHERE effective_at IS NULL;
