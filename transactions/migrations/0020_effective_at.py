"""Effective dates (docs/TIME.md): when a transaction, and each of its operations, took effect.
Every row already stored took effect when it was posted, and is filled so before the columns
become required (transactions/sql/effective_at_backfill*.0020.sql); the write function writes
them (transactions/sql/ledger_write_posting.0020.sql)."""

import django.utils.timezone
from django.db import migrations, models

from ledgerproject.migration_ops import postgresql_sql_files, sql_files


class Migration(migrations.Migration):

    dependencies = [
        ('transactions', '0019_transaction_actor'),
    ]

    operations = [
        migrations.AddField(
            model_name='transaction',
            name='effective_at',
            field=models.DateTimeField(null=True),
        ),
        migrations.AddField(
            model_name='operation',
            name='effective_at',
            field=models.DateTimeField(null=True),
        ),
        sql_files(
            "transactions",
            postgresql=("effective_at_backfill.0020.sql", None),
            sqlite=("effective_at_backfill_sqlite.0020.sql", None),
        ),
        migrations.AlterField(
            model_name='transaction',
            name='effective_at',
            field=models.DateTimeField(default=django.utils.timezone.now),
        ),
        migrations.AlterField(
            model_name='operation',
            name='effective_at',
            field=models.DateTimeField(default=django.utils.timezone.now),
        ),
        migrations.AddConstraint(
            model_name='transaction',
            constraint=models.CheckConstraint(condition=models.Q(('effective_at__lte', models.F('created_at'))), name='transaction_effective_by_posting'),
        ),
        migrations.AddConstraint(
            model_name='operation',
            constraint=models.CheckConstraint(condition=models.Q(('effective_at__lte', models.F('created_at'))), name='operation_effective_by_posting'),
        ),
        migrations.AddIndex(
            model_name='transaction',
            index=models.Index(fields=['ledger', 'effective_at', 'id'], name='tx_ledger_effective_idx'),
        ),
        migrations.AddIndex(
            model_name='operation',
            index=models.Index(fields=['account', 'effective_at'], name='op_account_effective_idx'),
        ),
        postgresql_sql_files(
            "transactions", "ledger_write_posting.0020.sql", "ledger_write_posting.0019.sql"
        ),
    ]
