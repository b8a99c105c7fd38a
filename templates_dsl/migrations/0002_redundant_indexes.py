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
