"""The indexes of these tables that only repeat the start of another, dropped as
organizations/migrations/0006_redundant_indexes.py explains (``ledgerproject.migration_ops.unindexed``)."""

import django.db.models.deletion
from django.db import migrations, models

from ledgerproject.migration_ops import unindexed


class Migration(migrations.Migration):
    dependencies = [
        ("organizations", "0006_redundant_indexes"),
        ("templates_dsl", "0001_initial"),
    ]

    operations = [
        unindexed(
            "templates_dsl",
            migrations.AlterField(
                model_name="transactiontemplate",
                name="ledger",
                field=models.ForeignKey(
                    db_index=False,
                    on_delete=django.db.models.deletion.PROTECT,
                    related_name="+",
                    to="organizations.ledger",
                ),
            ),
        ),
        unindexed(
            "templates_dsl",
            migrations.AlterField(
                model_name="transactiontemplate",
                name="organization",
                field=models.ForeignKey(
                    db_index=False,
                    on_delete=django.db.models.deletion.PROTECT,
                    related_name="+",
                    to="organizations.organization",
                ),
            ),
        ),
    ]
