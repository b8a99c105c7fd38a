"""Scheduled postings and holds that commit themselves (docs/TIME.md): the requests the
scheduler posts when their time comes, and a pending transaction's ``commit_at``, which the
write function writes (transactions/sql/ledger_write_posting.0022.sql)."""

import django.db.models.deletion
import django.utils.timezone
import ledgerproject.db
import ledgerproject.tenancy
from django.db import migrations, models

from ledgerproject.migration_ops import postgresql_sql_files


class Migration(migrations.Migration):

    dependencies = [
        ('organizations', '0009_ledger_closed_periods'),
        ('templates_dsl', '0002_redundant_indexes'),
        ('transactions', '0021_write_posting_closed_periods'),
    ]

    operations = [
        migrations.CreateModel(
            name='ScheduledPosting',
            fields=[
                ('id', models.UUIDField(default=ledgerproject.db.new_id, editable=False, primary_key=True, serialize=False)),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now, editable=False)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('status', models.CharField(default='SCHEDULED', max_length=20)),
                ('scheduled_for', models.DateTimeField()),
                ('template_code', models.CharField(blank=True, default='', max_length=100)),
                ('dsl', models.TextField(blank=True, default='')),
                ('variables', models.JSONField(blank=True, default=dict)),
                ('metadata', models.JSONField(blank=True, default=dict)),
                ('description', models.TextField(blank=True, null=True)),
                ('pending', models.BooleanField(blank=True, null=True)),
                ('parent_id', models.UUIDField(blank=True, null=True)),
                ('expires_at', models.DateTimeField(blank=True, null=True)),
                ('commit_at', models.DateTimeField(blank=True, null=True)),
                ('error', models.JSONField(blank=True, null=True)),
                ('claimed_until', models.DateTimeField(blank=True, null=True)),
                ('actor_kind', models.CharField(choices=[('token', 'token'), ('staff', 'staff'), ('command', 'command'), ('system', 'system')], default='system', max_length=16)),
                ('actor_name', models.CharField(default='', max_length=256)),
                ('actor_id', models.CharField(blank=True, max_length=64, null=True)),
                ('request_id', models.CharField(blank=True, default='', max_length=128)),
                ('organization', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='organizations.organization')),
                ('ledger', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='organizations.ledger')),
                ('transaction', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='transactions.transaction')),
            ],
            options={
                'ordering': ['created_at', 'id'],
                'abstract': False,
            },
            bases=(ledgerproject.tenancy.TenantRow, models.Model),
        ),
        ledgerproject.tenancy.DistributedWithTheOthers("transactions_scheduledposting"),
        migrations.AddField(
            model_name='transaction',
            name='commit_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddIndex(
            model_name='transaction',
            index=models.Index(condition=models.Q(('commit_at__isnull', False), ('status', 'PRE_APPROVED')), fields=['commit_at'], name='tx_pending_commit_idx'),
        ),
        migrations.AddConstraint(
            model_name='transaction',
            constraint=models.CheckConstraint(condition=models.Q(('commit_at__isnull', True), ('expires_at__isnull', True), ('commit_at__lt', models.F('expires_at')), _connector='OR'), name='transaction_commits_before_expiry'),
        ),
        migrations.AddIndex(
            model_name='scheduledposting',
            index=models.Index(fields=['ledger', 'created_at', 'id'], name='scheduled_ledger_created_idx'),
        ),
        migrations.AddIndex(
            model_name='scheduledposting',
            index=models.Index(condition=models.Q(('status', 'SCHEDULED')), fields=['scheduled_for'], name='scheduled_due_idx'),
        ),
        migrations.AddConstraint(
            model_name='scheduledposting',
            constraint=models.CheckConstraint(condition=models.Q(('status__in', ['SCHEDULED', 'POSTED', 'FAILED', 'CANCELED'])), name='scheduled_status_valid'),
        ),
        migrations.AddConstraint(
            model_name='scheduledposting',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('template_code', ''), models.Q(('dsl', ''), _negated=True)), models.Q(models.Q(('template_code', ''), _negated=True), ('dsl', '')), _connector='OR'), name='scheduled_one_template'),
        ),
        migrations.AddConstraint(
            model_name='scheduledposting',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('status', 'POSTED'), ('transaction__isnull', False)), models.Q(models.Q(('status', 'POSTED'), _negated=True), ('transaction__isnull', True)), _connector='OR'), name='scheduled_posted_names_transaction'),
        ),
        migrations.AddConstraint(
            model_name='scheduledposting',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('error__isnull', False), ('status', 'FAILED')), models.Q(models.Q(('status', 'FAILED'), _negated=True), ('error__isnull', True)), _connector='OR'), name='scheduled_failed_says_why'),
        ),
        postgresql_sql_files(
            "transactions", "ledger_write_posting.0022.sql", "ledger_write_posting.0021.sql"
        ),
    ]
