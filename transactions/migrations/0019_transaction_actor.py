"""Who posted a transaction, in which request (``ledgerproject.actors``); the write function
writes them, and the event's (transactions/sql/ledger_write_posting.0019.sql)."""

from django.db import migrations, models

from ledgerproject.migration_ops import postgresql_sql_files


class Migration(migrations.Migration):

    dependencies = [
        ('transactions', '0018_operation_type_with_effect'),
        ('outbox', '0005_event_actor'),
    ]

    operations = [
        migrations.AddField(
            model_name='transaction',
            name='actor_id',
            field=models.CharField(blank=True, max_length=64, null=True),
        ),
        migrations.AddField(
            model_name='transaction',
            name='actor_kind',
            field=models.CharField(choices=[('token', 'token'), ('staff', 'staff'), ('command', 'command'), ('system', 'system')], db_default='system', default='system', max_length=16),
        ),
        migrations.AddField(
            model_name='transaction',
            name='actor_name',
            field=models.CharField(db_default='', default='', max_length=256),
        ),
        migrations.AddField(
            model_name='transaction',
            name='request_id',
            field=models.CharField(blank=True, db_default='', default='', max_length=128),
        ),
        postgresql_sql_files(
            "transactions", "ledger_write_posting.0019.sql", "ledger_write_posting.0016.sql"
        ),
    ]
