"""The reason staff give for a posting in the back office (``ledgerproject.actors.reason``) is
kept on the posting's events, which the write function now writes too
(transactions/sql/ledger_write_posting.0024.sql)."""

from django.db import migrations

from ledgerproject.migration_ops import postgresql_sql_files


class Migration(migrations.Migration):

    dependencies = [
        ('transactions', '0023_conversions'),
        ('outbox', '0006_event_reason'),
    ]

    operations = [
        postgresql_sql_files(
            "transactions", "ledger_write_posting.0024.sql", "ledger_write_posting.0023.sql"
        ),
    ]
