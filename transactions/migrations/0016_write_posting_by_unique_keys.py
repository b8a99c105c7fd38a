"""``ledger_write_posting`` again: every row it checks or updates is found by the whole of a
unique key, one key at a time, so its plans do not depend on statistics (on tables never
analyzed, the balance update and the deleted-account check read every balance and account of
the organization). One body for every posting: no separate form for the usual one."""

from django.db import migrations

from ledgerproject.migration_ops import postgresql_sql_files


class Migration(migrations.Migration):
    dependencies = [("transactions", "0015_drop_write_posting_or_refuse")]

    operations = [
        postgresql_sql_files(
            "transactions", "ledger_write_posting.0016.sql", "ledger_write_posting.0013.sql"
        ),
    ]
