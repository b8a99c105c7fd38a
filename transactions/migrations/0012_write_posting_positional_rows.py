"""``ledger_write_posting`` again: each row arrives as a JSON array of its values in column
order, not as an object keyed by column name.

The objects' keys were most of what the service built and sent for a posting's rows, and most
of what PostgreSQL parsed and sorted (a ``jsonb`` object keeps its keys sorted) before
``jsonb_to_recordset`` looked each one up again. Reading a value by its position is a direct
index into the array. A JSON ``null`` in a ``jsonb`` column is stored as SQL NULL, as
``jsonb_to_recordset`` stored it.

``transactions.writes`` sends each table's values in the order of the function's INSERT column
lists, which tests/performance/test_write_positions.py reads from the current file and holds."""

from django.db import migrations

from ledgerproject.migration_ops import postgresql_sql_files


class Migration(migrations.Migration):
    dependencies = [("transactions", "0011_key_answer_inline")]

    operations = [
        postgresql_sql_files("transactions", "ledger_write_posting.0012.sql", "ledger_write_posting.0010.sql"),
    ]
