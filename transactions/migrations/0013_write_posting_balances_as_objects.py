"""``ledger_write_posting`` again: the new balances arrive as objects, read by
``jsonb_to_recordset`` as in 0010; the transactions, operations and events stay arrays read by
position, as in 0012.

Reading a ``timestamptz`` from text is a STABLE function (it depends on the session's time
zone), and Citus refuses an UPDATE that calls one on a column of its source: with 0012 every
posting through a Citus coordinator failed. ``jsonb_to_recordset`` converts inside the
function instead."""

from django.db import migrations

from ledgerproject.migration_ops import postgresql_sql_files


class Migration(migrations.Migration):
    dependencies = [("transactions", "0012_write_posting_positional_rows")]

    operations = [
        postgresql_sql_files("transactions", "ledger_write_posting.0013.sql", "ledger_write_posting.0012.sql"),
    ]
