"""``ledger_write_posting`` again: the usual posting's balances are updated through an index.

The balance update joined the table with the rows sent (``jsonb_to_recordset``), which the
planner takes for a hundred rows; against a ledger of many accounts it could find a hash join
over a sequential scan of every balance cheaper than looking two up. For the usual posting
(one asset, at most two accounts, the form 0009 introduced) the update now also names the two
accounts, which the planner sees exactly, so it reads their balances by
``balance_account_uniq``. The balances written are those of the accounts the guard names
(``engine`` and ``states`` build both from the same list); the function checks that every row
sent was updated, and raises otherwise, so a caller that broke that rule could not lose a
balance silently. Any other posting runs the update of 0007 unchanged."""

from django.db import migrations

from ledgerproject.migration_ops import postgresql_sql_files


class Migration(migrations.Migration):
    dependencies = [("transactions", "0009_write_posting_plans")]

    operations = [
        postgresql_sql_files("transactions", "ledger_write_posting.0010.sql", "ledger_write_posting.0009.sql"),
    ]
