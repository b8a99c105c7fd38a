"""Conversions between assets (docs/CONVERSIONS.md): a transaction that delivers in another asset
than it sends records the rate and both amounts, on itself and on each of its operations, and
the write function writes them (transactions/sql/ledger_write_posting.0023.sql)."""

from django.db import migrations, models

from ledgerproject.migration_ops import postgresql_sql_files


class Migration(migrations.Migration):

    dependencies = [
        ('transactions', '0022_scheduled_postings'),
    ]

    operations = [
        migrations.AddField(
            model_name='operation',
            name='conversion',
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='transaction',
            name='conversion',
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='scheduledposting',
            name='rate',
            field=models.JSONField(blank=True, null=True),
        ),
        postgresql_sql_files(
            "transactions", "ledger_write_posting.0023.sql", "ledger_write_posting.0022.sql"
        ),
    ]
