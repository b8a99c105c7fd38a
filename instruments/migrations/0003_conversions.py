"""Conversions at stored rates (docs/CONVERSIONS.md): every value a rate holds, with the time it
took effect, so that a posting converts at the value in force at its effective time. A rate
made before this migration gets one value, its current one, in force since the rate last
changed (the ledger knows nothing of its values before)."""

import django.db.models.deletion
import ledgerproject.db
import ledgerproject.tenancy
from django.db import migrations, models


def first_values(apps, schema_editor):
    Rate = apps.get_model("instruments", "Rate")
    RateValue = apps.get_model("instruments", "RateValue")
    alias = schema_editor.connection.alias
    for rate in Rate.objects.using(alias).order_by("organization_id", "id").iterator():
        RateValue.objects.using(alias).create(
            organization_id=rate.organization_id,
            ledger_id=rate.ledger_id,
            rate_id=rate.pk,
            amount=rate.amount,
            scale=rate.scale,
            valid_from=rate.updated_at,
        )


class Migration(migrations.Migration):

    dependencies = [
        ('instruments', '0002_redundant_indexes'),
        ('organizations', '0010_conversions'),
    ]

    operations = [
        migrations.CreateModel(
            name='RateValue',
            fields=[
                ('id', models.UUIDField(default=ledgerproject.db.new_id, editable=False, primary_key=True, serialize=False)),
                ('amount', models.BigIntegerField()),
                ('scale', models.PositiveSmallIntegerField()),
                ('valid_from', models.DateTimeField()),
                ('organization', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='organizations.organization')),
                ('ledger', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='organizations.ledger')),
                ('rate', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='values', to='instruments.rate')),
            ],
            options={
                'ordering': ['valid_from', 'id'],
            },
            bases=(ledgerproject.tenancy.TenantRow, models.Model),
        ),
        ledgerproject.tenancy.DistributedWithTheOthers("instruments_ratevalue"),
        migrations.AddIndex(
            model_name='rate',
            index=models.Index(fields=['ledger', 'base_code', 'counter_code'], name='rate_pair_idx'),
        ),
        migrations.AddIndex(
            model_name='ratevalue',
            index=models.Index(fields=['rate', 'valid_from'], name='rate_value_rate_idx'),
        ),
        migrations.AddConstraint(
            model_name='ratevalue',
            constraint=models.CheckConstraint(condition=models.Q(('amount__gt', 0)), name='rate_value_amount_positive'),
        ),
        migrations.AddConstraint(
            model_name='ratevalue',
            constraint=models.CheckConstraint(condition=models.Q(('scale__lte', 18)), name='rate_value_scale_range'),
        ),
        migrations.RunPython(first_values, migrations.RunPython.noop),
    ]
