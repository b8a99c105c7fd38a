"""Amounts and balances: 64-bit integers -> integers of up to 38 digits (numeric(38, 0) on
PostgreSQL, canonical decimal text on SQLite). The values are kept as they are."""

import django.db.models.deletion
import ledgerproject.db
from django.db import migrations, models
from django.db.migrations.operations.base import Operation


class KeepBalanceAccountNotUnique(Operation):
    """SQLite rebuilds the balance table from Django's state, which has the one-to-one (and so
    a UNIQUE account_id); 0003 keeps that uniqueness as balance_account_uniq instead. Re-apply
    0003's database-only change after the rebuild, in whichever direction this migration runs."""

    reversible = True

    def __init__(self, direction):
        self.direction = direction

    def state_forwards(self, app_label, state):
        pass

    def _run(self, app_label, schema_editor, state):
        if schema_editor.connection.vendor != "sqlite":
            return
        target = state.clone()
        change = migrations.AlterField(
            model_name="balance",
            name="account",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="balance",
                to="organizations.account",
            ),
        )
        change.state_forwards(app_label, target)
        change.database_forwards(app_label, schema_editor, state, target)

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        if self.direction == "forwards":
            self._run(app_label, schema_editor, to_state)

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        if self.direction == "backwards":
            self._run(app_label, schema_editor, to_state)

    def describe(self):
        return "Keep balance.account_id without a UNIQUE of its own on SQLite"


class Migration(migrations.Migration):

    dependencies = [
        ('transactions', '0003_tenant_unique_constraints'),
    ]

    operations = [
        KeepBalanceAccountNotUnique("backwards"),
        migrations.AlterField(
            model_name='balance',
            name='available',
            field=ledgerproject.db.AmountField(default=0),
        ),
        migrations.AlterField(
            model_name='balance',
            name='on_hold',
            field=ledgerproject.db.AmountField(default=0),
        ),
        migrations.AlterField(
            model_name='operation',
            name='amount',
            field=ledgerproject.db.AmountField(),
        ),
        migrations.AlterField(
            model_name='operation',
            name='balance_available',
            field=ledgerproject.db.AmountField(),
        ),
        migrations.AlterField(
            model_name='operation',
            name='balance_available_after',
            field=ledgerproject.db.AmountField(),
        ),
        migrations.AlterField(
            model_name='operation',
            name='balance_on_hold',
            field=ledgerproject.db.AmountField(),
        ),
        migrations.AlterField(
            model_name='operation',
            name='balance_on_hold_after',
            field=ledgerproject.db.AmountField(),
        ),
        migrations.AlterField(
            model_name='transaction',
            name='amount',
            field=ledgerproject.db.AmountField(),
        ),
        KeepBalanceAccountNotUnique("forwards"),
]
