"""The write function refuses, under the ledger's lock, operations effective in the ledger's
closed period (transactions/sql/ledger_write_posting.0021.sql, docs/TIME.md)."""

from django.db import migrations

from ledgerproject.migration_ops import postgresql_sql_files


class Migration(migrations.Migration):

    dependencies = [
        ('organizations', '0009_ledger_closed_periods'),
        ('transactions', '0020_effective_at'),
    ]

    operations = [
        postgresql_sql_files(
            "transactions", "ledger_write_posting.0021.sql", "ledger_write_posting.0020.sql"
        ),
    ]
