"""Balance monitors (docs/BALANCE-MONITORS.md): conditions on an account's balance that fire
an event when a posting makes them true, and the flag on a balance that says its postings
read them."""

import django.db.models.deletion
import django.utils.timezone
import ledgerproject.db
import ledgerproject.tenancy
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('organizations', '0010_conversions'),
    ]

    operations = [
        migrations.AddField(
            model_name='balance',
            name='monitored',
            field=models.BooleanField(blank=True, null=True),
        ),
        migrations.CreateModel(
            name='BalanceMonitor',
            fields=[
                ('id', models.UUIDField(default=ledgerproject.db.new_id, editable=False, primary_key=True, serialize=False)),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now, editable=False)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('status_code', models.CharField(default='ACTIVE', max_length=100)),
                ('status_description', models.CharField(blank=True, max_length=256, null=True)),
                ('metadata', models.JSONField(blank=True, default=dict)),
                ('deleted_at', models.DateTimeField(blank=True, null=True)),
                ('measure', models.CharField(choices=[('available', 'available'), ('onHold', 'onHold'), ('overdraftUsed', 'overdraftUsed')], max_length=16)),
                ('condition', models.CharField(choices=[('below', 'below'), ('above', 'above'), ('crossing', 'crossing')], max_length=16)),
                ('threshold', ledgerproject.db.AmountField()),
                ('threshold_scale', models.PositiveSmallIntegerField(default=0)),
                ('description', models.CharField(blank=True, default='', max_length=256)),
                ('holds', models.BooleanField(default=False)),
                ('last_triggered_at', models.DateTimeField(blank=True, null=True)),
                ('account', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='monitors', to='organizations.account')),
                ('ledger', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='organizations.ledger')),
                ('organization', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='organizations.organization')),
            ],
            options={
                'ordering': ['created_at', 'id'],
                'abstract': False,
                'indexes': [models.Index(fields=['ledger', 'created_at', 'id'], name='monitor_ledger_created_idx'), models.Index(condition=models.Q(('deleted_at__isnull', True)), fields=['account'], name='monitor_account_idx')],
                'constraints': [models.CheckConstraint(condition=models.Q(('measure__in', ['available', 'onHold', 'overdraftUsed'])), name='monitor_measure_known'), models.CheckConstraint(condition=models.Q(('condition__in', ['below', 'above', 'crossing'])), name='monitor_condition_known'), models.CheckConstraint(condition=models.Q(('threshold_scale__lte', 18)), name='monitor_threshold_scale_range')],
            },
            bases=(ledgerproject.tenancy.TenantRow, models.Model),
        ),
        ledgerproject.tenancy.DistributedWithTheOthers("organizations_balancemonitor"),
    ]
