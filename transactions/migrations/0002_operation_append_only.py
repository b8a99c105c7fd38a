"""On PostgreSQL, refuse UPDATE and DELETE of operations with a trigger: the statement is
append-only in the database too, not only in Python. (SQLite keeps the rule in Python; its test
flush deletes rows, which such a trigger would refuse.)"""

from django.db import migrations

from ledgerproject.db import postgresql_only

CREATE = """
CREATE OR REPLACE FUNCTION transactions_operation_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'operations are append-only: % on transactions_operation refused', TG_OP
        USING ERRCODE = 'check_violation';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER operation_append_only
    BEFORE UPDATE OR DELETE ON transactions_operation
    FOR EACH ROW EXECUTE FUNCTION transactions_operation_append_only();
"""

DROP = """
DROP TRIGGER IF EXISTS operation_append_only ON transactions_operation;
DROP FUNCTION IF EXISTS transactions_operation_append_only();
"""


class Migration(migrations.Migration):
    dependencies = [("transactions", "0001_initial")]

    operations = [postgresql_only(CREATE, DROP)]
