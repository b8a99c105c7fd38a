"""Double entry in the database. On PostgreSQL, deferred constraint triggers refuse, at commit,
a transaction whose debits and credits differ in an asset, an operation whose balance change
is not its amount or that does not start where its account's previous one ended, and a balance
that is not what its account's last operation left. SQLite holds what its row triggers can
(docs/BOOKS.md). The SQL: transactions/sql/double_entry.0017.sql, double_entry_sqlite.0017.sql."""

from django.db import migrations

from ledgerproject.migration_ops import sql_files


class Migration(migrations.Migration):
    dependencies = [
        ("transactions", "0016_write_posting_by_unique_keys"),
        ("organizations", "0008_drop_account_ledger_asset_idx"),
    ]

    operations = [
        sql_files(
            "transactions",
            postgresql=("double_entry.0017.sql", "double_entry.drop.sql"),
            sqlite=("double_entry_sqlite.0017.sql", "double_entry_sqlite.drop.sql"),
        ),
    ]
