"""On PostgreSQL, refuse UPDATE and DELETE of operations with a trigger: the statement is
append-only in the database too, not only in Python. (SQLite keeps the rule in Python; its test
flush deletes rows, which such a trigger would refuse.) The SQL: transactions/sql/."""

from django.db import migrations

from ledgerproject.migration_ops import postgresql_sql_files


class Migration(migrations.Migration):
    dependencies = [("transactions", "0001_initial")]

    operations = [
        postgresql_sql_files("transactions", "operation_append_only.sql", "operation_append_only.drop.sql"),
    ]
