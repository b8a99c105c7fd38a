"""A ledger may bound the age of the rates its conversions take (docs/CONVERSIONS.md)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('organizations', '0009_ledger_closed_periods'),
    ]

    operations = [
        migrations.AddField(
            model_name='ledger',
            name='max_rate_age',
            field=models.PositiveIntegerField(blank=True, null=True, verbose_name='max rate age (seconds)'),
        ),
    ]
