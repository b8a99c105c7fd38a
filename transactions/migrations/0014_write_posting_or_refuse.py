"""``ledger_write_posting_or_refuse``: ``ledger_write_posting`` (0013), raising instead of
answering false when the guard does not hold.

The engine sends the usual posting's write and its COMMIT in one round trip: the COMMIT runs
unless the write fails, so a write whose guard does not hold must fail, or the COMMIT would
keep what the transaction wrote before it (its idempotency keys). The error's SQLSTATE is
``LG001`` (``writes.GUARD_BROKEN``): the engine rolls back and posts again the ordinary way,
where the write answers false and the guard's refusal is explained as before.
``ledger_write_posting`` itself is unchanged."""

from django.db import migrations

from ledgerproject.migration_ops import postgresql_sql_files


class Migration(migrations.Migration):
    dependencies = [("transactions", "0013_write_posting_balances_as_objects")]

    operations = [
        postgresql_sql_files("transactions", "ledger_write_posting_or_refuse.0014.sql", "ledger_write_posting_or_refuse.drop.sql"),
    ]
