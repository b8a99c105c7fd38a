"""Overdraft limits: a limit on the balance row (at the balance's scale, default 0) and the
check that available + limit never goes below zero (external accounts still unbounded)."""

import django.db.models.expressions
import django.db.models.functions.comparison
import django.db.models.lookups
import ledgerproject.db
import django.db.models.deletion
from django.db import migrations, models


class AlterFieldOnSQLite(migrations.AlterField):
    """SQLite rebuilds the table from Django's state to change a CHECK, which brings back the
    UNIQUE of the one-to-one account column that transactions/0003 took off (one balance per
    account is balance_account_uniq, with organization). PostgreSQL rebuilt nothing."""

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "sqlite":
            super().database_forwards(app_label, schema_editor, from_state, to_state)

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        pass  # the operations before this one rebuild the table again on the way back


class Migration(migrations.Migration):

    dependencies = [
        ('organizations', '0002_balance'),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='balance',
            name='balance_available_not_negative',
        ),
        migrations.AddField(
            model_name='balance',
            name='overdraft_limit',
            field=ledgerproject.db.AmountField(default=0),
        ),
        migrations.AddConstraint(
            model_name='balance',
            constraint=models.CheckConstraint(condition=models.Q(('is_external', True), django.db.models.lookups.GreaterThanOrEqual(django.db.models.expressions.CombinedExpression(django.db.models.functions.comparison.Cast('available', models.DecimalField(decimal_places=0, max_digits=38)), '+', django.db.models.functions.comparison.Cast('overdraft_limit', models.DecimalField(decimal_places=0, max_digits=38))), models.Value(0)), _connector='OR'), name='balance_available_within_overdraft'),
        ),
        migrations.AddConstraint(
            model_name='balance',
            constraint=models.CheckConstraint(condition=models.Q(('overdraft_limit__gte', 0)), name='balance_overdraft_not_negative'),
        ),
        # Last: on SQLite the column loses its UNIQUE again (see AlterFieldOnSQLite).
        migrations.SeparateDatabaseAndState(
            database_operations=[
                AlterFieldOnSQLite(
                    model_name='balance',
                    name='account',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='balance', to='organizations.account'),
                ),
            ],
        ),
    ]
