"""Closed periods (docs/TIME.md): a ledger's time zone, the last day of its closed books and
the first instant of its open period, and the staff permission to reopen them."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('organizations', '0008_drop_account_ledger_asset_idx'),
    ]

    operations = [
        migrations.AlterModelOptions(
            name='ledger',
            options={'ordering': ['created_at', 'id'], 'permissions': [('reopen_period', "Can reopen a ledger's closed period")]},
        ),
        migrations.AddField(
            model_name='ledger',
            name='closed_through',
            field=models.DateField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='ledger',
            name='period_opens_at',
            field=models.DateTimeField(blank=True, editable=False, null=True),
        ),
        migrations.AddField(
            model_name='ledger',
            name='time_zone',
            field=models.CharField(db_default='UTC', default='UTC', max_length=64),
        ),
    ]
