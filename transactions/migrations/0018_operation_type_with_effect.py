"""An operation's type goes with its effect: a DEBIT posts, holds or settles; a CREDIT posts or
releases (what double entry sums, transactions/sql/double_entry.0017.sql)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('organizations', '0008_drop_account_ledger_asset_idx'),
        ('transactions', '0017_double_entry'),
    ]

    operations = [
        migrations.AddConstraint(
            model_name='operation',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('effect__in', ['POST', 'HOLD', 'SETTLE']), ('type', 'DEBIT')), models.Q(('effect__in', ['POST', 'RELEASE']), ('type', 'CREDIT')), _connector='OR'), name='operation_type_with_effect'),
        ),
    ]
