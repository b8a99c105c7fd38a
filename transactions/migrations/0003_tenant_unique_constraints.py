"""Every unique constraint of a tenant table includes organization_id, so that the tables can
be distributed by tenant (docs/SCALING.md). Each new constraint is equivalent to the old one (an
account, and so a parent transaction, belongs to exactly one organization)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('organizations', '0001_initial'),
        ('templates_dsl', '0001_initial'),
        ('transactions', '0002_operation_append_only'),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='operation',
            name='operation_account_version_uniq',
        ),
        migrations.RemoveConstraint(
            model_name='transaction',
            name='transaction_one_reversal',
        ),
        migrations.AddConstraint(
            model_name='balance',
            constraint=models.UniqueConstraint(fields=('account', 'organization'), name='balance_account_uniq'),
        ),
        migrations.AddConstraint(
            model_name='operation',
            constraint=models.UniqueConstraint(fields=('account', 'balance_version', 'organization'), name='operation_account_version_uniq'),
        ),
        migrations.AddConstraint(
            model_name='transaction',
            constraint=models.UniqueConstraint(condition=models.Q(('is_reversal', True)), fields=('parent', 'organization'), name='transaction_one_reversal'),
        ),
        # The database keeps "one balance per account" as balance_account_uniq (above), not as a
        # unique column: Django's state keeps the one-to-one (its reverse accessor and
        # select_related need it), while the column itself loses its UNIQUE and keeps an index.
        # Last, because SQLite rebuilds the table from Django's state when it adds a constraint.
        # A later AlterField of Balance.account must take this into account.
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.AlterField(
                    model_name='balance',
                    name='account',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='balance', to='organizations.account'),
                ),
            ],
        ),
    ]
