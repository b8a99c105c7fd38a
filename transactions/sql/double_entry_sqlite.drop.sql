DROP TRIGGER IF EXISTS operation_changes_by_its_amount;
DROP TRIGGER IF EXISTS operation_double_entry;
DROP TRIGGER IF EXISTS balance_double_entry_insert;
DROP TRIGGER IF EXISTS balance_double_entry;
