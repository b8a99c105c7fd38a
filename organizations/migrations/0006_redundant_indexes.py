"""Drop the indexes that only repeat the start of another: every insert pays for each index
(a posting inserts a transaction and its operations), and PostgreSQL's planner weighs each one
on every statement it plans. The organization_id of every tenant table begins its primary key
(organization_id, id); ledger_id begins each table's (ledger, created_at, id) index; a foreign
key keeps its constraint (``ledgerproject.migration_ops.unindexed``). tests/transactions/test_indexes.py
keeps it that way."""

import django.db.models.deletion
from django.db import migrations, models

from ledgerproject.migration_ops import drop_field_index, unindexed


class Migration(migrations.Migration):
    dependencies = [
        ("organizations", "0005_tenant_keys"),
    ]

    operations = [
        # Balance.account is one-to-one in Django's state; its index only begins
        # balance_account_uniq (account, organization).
        drop_field_index("organizations", "balance", "account"),
        migrations.RemoveIndex(
            model_name="portfolio",
            name="portfolio_org_idx",
        ),
        unindexed(
            "organizations",
            migrations.AlterField(
                model_name="account",
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
            "organizations",
            migrations.AlterField(
                model_name="account",
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
            "organizations",
            migrations.AlterField(
                model_name="balance",
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
            "organizations",
            migrations.AlterField(
                model_name="balance",
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
            "organizations",
            migrations.AlterField(
                model_name="ledger",
                name="organization",
                field=models.ForeignKey(
                    db_index=False,
                    on_delete=django.db.models.deletion.PROTECT,
                    related_name="ledgers",
                    to="organizations.organization",
                ),
            ),
        ),
        unindexed(
            "organizations",
            migrations.AlterField(
                model_name="portfolio",
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
            "organizations",
            migrations.AlterField(
                model_name="portfolio",
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
            "organizations",
            migrations.AlterField(
                model_name="product",
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
            "organizations",
            migrations.AlterField(
                model_name="product",
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
