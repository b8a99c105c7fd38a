"""The indexes of these tables that only repeat the start of another, dropped as
organizations/migrations/0006_redundant_indexes.py explains (``ledgerproject.migration_ops.unindexed``)."""

import django.db.models.deletion
from django.db import migrations, models

from ledgerproject.migration_ops import unindexed


class Migration(migrations.Migration):
    dependencies = [
        ("organizations", "0006_redundant_indexes"),
        ("transactions", "0007_write_posting_function"),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="operation",
            name="op_org_idx",
        ),
        migrations.RemoveIndex(
            model_name="transaction",
            name="tx_org_idx",
        ),
        unindexed(
            "transactions",
            migrations.AlterField(
                model_name="idempotencykey",
                name="organization",
                field=models.ForeignKey(
                    db_index=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="+",
                    to="organizations.organization",
                ),
            ),
        ),
        unindexed(
            "transactions",
            migrations.AlterField(
                model_name="operation",
                name="account",
                field=models.ForeignKey(
                    db_index=False,
                    on_delete=django.db.models.deletion.PROTECT,
                    related_name="operations",
                    to="organizations.account",
                ),
            ),
        ),
        unindexed(
            "transactions",
            migrations.AlterField(
                model_name="operation",
                name="organization",
                field=models.ForeignKey(
                    db_index=False,
                    on_delete=django.db.models.deletion.PROTECT,
                    related_name="+",
                    to="organizations.organization",
                ),
            ),
        ),
        unindexed(
            "transactions",
            migrations.AlterField(
                model_name="operation",
                name="transaction",
                field=models.ForeignKey(
                    db_index=False,
                    on_delete=django.db.models.deletion.PROTECT,
                    related_name="operations",
                    to="transactions.transaction",
                ),
            ),
        ),
        unindexed(
            "transactions",
            migrations.AlterField(
                model_name="transaction",
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
            "transactions",
            migrations.AlterField(
                model_name="transaction",
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
