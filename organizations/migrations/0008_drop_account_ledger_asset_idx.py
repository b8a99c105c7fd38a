"""The accounts' (ledger_id, asset_code) index becomes (asset_code, ledger_id, created_at, id).

On tables never analyzed PostgreSQL clamps every estimate to one row and chooses among the
indexes it can use by their cost, which is then about their size: it took the old index (all
of a ledger's accounts of one asset share its key, so deduplication kept it a page or two) to
find a posting's accounts, and read every account of the ledger on each posting. Led by the
ledger, even a larger index ties with the unique key of the active alias and may win. Led by the
asset, which a posting's lookup does not name, it cannot serve that lookup at all, and still
serves the account list filtered by asset in its order (``assetCode``)
(tests/performance/test_posting_plans.py)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("organizations", "0007_account_status_list"),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="account",
            name="account_ledger_asset_idx",
        ),
        migrations.AddIndex(
            model_name="account",
            index=models.Index(
                fields=["asset_code", "ledger", "created_at", "id"],
                name="account_ledger_asset_list_idx",
            ),
        ),
    ]
