"""Drop the indexes that only repeat the start of another: every insert pays for each index
(a posting inserts a transaction and its operations), and PostgreSQL's planner weighs each one
on every statement it plans. The organization_id of every tenant table begins its primary key
(organization_id, id); ledger_id begins each table's (ledger, created_at, id) index; a foreign
key keeps its constraint (``ledgerproject.db.unindexed``). tests/transactions/test_indexes.py
keeps it that way."""

import django.db.models.deletion
from django.db import migrations, models

from ledgerproject.db import unindexed


class Migration(migrations.Migration):
    dependencies = [
        ("instruments", "0001_initial"),
        ("organizations", "0006_redundant_indexes"),
    ]

    operations = [
        unindexed(
            "instruments",
            migrations.AlterField(
                model_name="instrument",
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
            "instruments",
            migrations.AlterField(
                model_name="instrument",
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
            "instruments",
            migrations.AlterField(
                model_name="rate",
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
            "instruments",
            migrations.AlterField(
                model_name="rate",
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
