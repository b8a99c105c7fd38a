"""Drop ``ledger_write_posting_or_refuse`` (0014). A posting's write and its COMMIT no longer
travel in one round trip: Django commits when the posting's atomic block ends, and the write
answers false when its guard does not hold, as ``ledger_write_posting`` always did."""

from django.db import migrations

from ledgerproject.migration_ops import postgresql_sql_files


class Migration(migrations.Migration):
    dependencies = [("transactions", "0014_write_posting_or_refuse")]

    operations = [
        postgresql_sql_files(
            "transactions",
            "ledger_write_posting_or_refuse.drop.sql",
            "ledger_write_posting_or_refuse.0014.sql",
        ),
    ]
