"""Maker-checker approvals in the back office (``transactions.approvals``): a ledger's rules
of which actions need a second person, and the proposals waiting for, or given, a decision."""

import django.db.models.deletion
import django.utils.timezone
import ledgerproject.db
import ledgerproject.tenancy
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('organizations', '0012_tree_monitors'),
        ('transactions', '0024_posting_reason'),
    ]

    operations = [
        migrations.CreateModel(
            name='Approval',
            fields=[
                ('id', models.UUIDField(default=ledgerproject.db.new_id, editable=False, primary_key=True, serialize=False)),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now, editable=False)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('action', models.CharField(choices=[('post', 'post'), ('revert', 'revert'), ('limit', 'limit'), ('reopen', 'reopen')], max_length=16)),
                ('request', models.JSONField(default=dict)),
                ('summary', models.TextField()),
                ('status', models.CharField(default='PENDING', max_length=16)),
                ('maker_id', models.CharField(max_length=64)),
                ('maker_name', models.CharField(max_length=256)),
                ('maker_reason', models.CharField(max_length=500)),
                ('checker_id', models.CharField(blank=True, max_length=64, null=True)),
                ('checker_name', models.CharField(blank=True, default='', max_length=256)),
                ('checker_reason', models.CharField(blank=True, default='', max_length=500)),
                ('decided_at', models.DateTimeField(blank=True, null=True)),
                ('error', models.JSONField(blank=True, null=True)),
                ('ledger', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='organizations.ledger')),
                ('organization', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='organizations.organization')),
                ('transaction', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='transactions.transaction')),
            ],
            options={
                'ordering': ['created_at', 'id'],
                'permissions': [('decide_approval', 'Can approve or reject what another proposed')],
                'abstract': False,
                'indexes': [models.Index(fields=['organization', 'ledger', 'status'], name='approval_status_idx')],
                'constraints': [models.CheckConstraint(condition=models.Q(('status__in', ['PENDING', 'DONE', 'REJECTED', 'FAILED'])), name='approval_status_known'), models.CheckConstraint(condition=models.Q(('action__in', ['post', 'revert', 'limit', 'reopen'])), name='approval_action_known'), models.CheckConstraint(condition=models.Q(('checker_id__isnull', True), models.Q(('checker_id', models.F('maker_id')), _negated=True), _connector='OR'), name='approval_checker_not_maker')],
            },
            bases=(ledgerproject.tenancy.TenantRow, models.Model),
        ),
        ledgerproject.tenancy.DistributedWithTheOthers("transactions_approval"),
        migrations.CreateModel(
            name='ApprovalRule',
            fields=[
                ('id', models.UUIDField(default=ledgerproject.db.new_id, editable=False, primary_key=True, serialize=False)),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now, editable=False)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('action', models.CharField(choices=[('post', 'manual posting'), ('revert', 'revert'), ('limit', 'overdraft limit change'), ('reopen', 'reopening a closed period')], max_length=16)),
                ('asset_code', models.CharField(blank=True, default='', max_length=100)),
                ('above', ledgerproject.db.AmountField(blank=True, null=True)),
                ('above_scale', models.PositiveSmallIntegerField(default=0)),
                ('ledger', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='organizations.ledger')),
                ('organization', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='organizations.organization')),
            ],
            options={
                'ordering': ['created_at', 'id'],
                'abstract': False,
                'indexes': [models.Index(fields=['organization', 'ledger', 'action'], name='approval_rule_idx')],
                'constraints': [models.CheckConstraint(condition=models.Q(('action__in', ['post', 'revert', 'limit', 'reopen'])), name='approval_rule_action_known')],
            },
            bases=(ledgerproject.tenancy.TenantRow, models.Model),
        ),
        ledgerproject.tenancy.DistributedWithTheOthers("transactions_approvalrule"),
    ]
