"""The journal's blocks, append-only in the database (journal/sql/block_append_only.*)."""

from django.db import migrations, models

import ledgerproject.db
from ledgerproject.migration_ops import sql_files


class Migration(migrations.Migration):
    initial = True

    dependencies = [("outbox", "0003_worker_leases_and_subscription_health")]

    operations = [
        migrations.CreateModel(
            name="Block",
            fields=[
                ("id", models.UUIDField(default=ledgerproject.db.new_id, editable=False, primary_key=True, serialize=False)),
                ("organization_id", models.UUIDField()),
                ("ledger_id", models.UUIDField()),
                ("height", models.PositiveBigIntegerField()),
                ("entry_count", models.PositiveIntegerField()),
                ("first_xid", models.BigIntegerField()),
                ("first_seq", models.BigIntegerField()),
                ("last_xid", models.BigIntegerField()),
                ("last_seq", models.BigIntegerField()),
                ("root", models.CharField(max_length=64)),
                ("previous_hash", models.CharField(max_length=64)),
                ("hash", models.CharField(max_length=64)),
                ("leaves", models.BinaryField()),
                ("sealed_at", models.DateTimeField()),
            ],
            options={
                "ordering": ["organization_id", "ledger_id", "height"],
                "indexes": [models.Index(fields=["organization_id", "ledger_id", "last_xid", "last_seq"], name="journal_block_last_idx")],
                "constraints": [
                    models.UniqueConstraint(fields=("organization_id", "ledger_id", "height"), name="journal_block_height"),
                    models.CheckConstraint(condition=models.Q(("entry_count__gt", 0)), name="journal_block_not_empty"),
                ],
            },
        ),
        sql_files(
            "journal",
            postgresql=("block_append_only.0001.sql", "block_append_only.drop.sql"),
            sqlite=("block_append_only_sqlite.0001.sql", "block_append_only_sqlite.drop.sql"),
        ),
    ]
