"""Balance moves here from transactions (it is the running balance of an account, and the
services that open accounts and instruments create it): the model moves in Django's state
only, then its table is renamed. No row is touched."""

import django.db.models.deletion
import ledgerproject.db
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('organizations', '0001_initial'),
        ('transactions', '0004_amounts_38_digits'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[migrations.CreateModel(
            name='Balance',
            fields=[
                ('id', models.UUIDField(default=ledgerproject.db.new_id, editable=False, primary_key=True, serialize=False)),
                ('asset_code', models.CharField(max_length=100)),
                ('is_external', models.BooleanField(default=False)),
                ('available', ledgerproject.db.AmountField(default=0)),
                ('on_hold', ledgerproject.db.AmountField(default=0)),
                ('scale', models.PositiveSmallIntegerField(default=0)),
                ('version', models.BigIntegerField(default=0)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('account', models.OneToOneField(on_delete=django.db.models.deletion.PROTECT, related_name='balance', to='organizations.account')),
                ('ledger', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='organizations.ledger')),
                ('organization', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='organizations.organization')),
            ],
            options={
                'ordering': ['id'],
                'db_table': 'transactions_balance',
                'indexes': [models.Index(fields=['ledger', 'asset_code'], name='balance_ledger_asset_idx')],
                'constraints': [models.CheckConstraint(condition=models.Q(('is_external', True), ('available__gte', 0), _connector='OR'), name='balance_available_not_negative'), models.CheckConstraint(condition=models.Q(('on_hold__gte', 0)), name='balance_on_hold_not_negative'), models.CheckConstraint(condition=models.Q(('scale__lte', 18)), name='balance_scale_range'), models.UniqueConstraint(fields=('account', 'organization'), name='balance_account_uniq')],
            },
        )]),
        migrations.AlterModelTable(name='balance', table=None),
    ]
