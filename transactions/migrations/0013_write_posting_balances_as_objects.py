"""``ledger_write_posting`` again: the new balances arrive as objects, read by
``jsonb_to_recordset`` as in 0010; the transactions, operations and events stay arrays read by
position, as in 0012.

Reading a ``timestamptz`` from text is a STABLE function (it depends on the session's time
zone), and Citus refuses an UPDATE that calls one on a column of its source: with 0012 every
posting through a Citus coordinator failed. ``jsonb_to_recordset`` converts inside the
function instead. 0012's way back is this migration's.

The text is 0012's up to its balance update, so the positional rows are read as 0012 reads
them, in its column order (``COLUMNS`` there). Signature, guard and the balance updates (the
usual posting's with its row count check) are those of 0010, taken from its text."""

import importlib

from django.db import migrations

from ledgerproject.db import postgresql_only

# 0012: this migration's way back, and the source of its text up to the balance update
POSITIONAL = importlib.import_module("transactions.migrations.0012_write_posting_positional_rows")
PREVIOUS = POSITIONAL.PREVIOUS  # 0010: the balance updates, taken from its text
BALANCE_UPDATE = "    IF usual THEN\n        UPDATE organizations_balance"
CREATE = (
    POSITIONAL.CREATE[: POSITIONAL.CREATE.index(BALANCE_UPDATE)]
    + f"""    IF usual THEN
    {PREVIOUS.USUAL_UPDATE}
    ELSE
    {PREVIOUS.UPDATE}    END IF;
    RETURN true;
END;
$$;
"""
)


class Migration(migrations.Migration):
    dependencies = [("transactions", "0012_write_posting_positional_rows")]

    operations = [postgresql_only(CREATE, POSITIONAL.CREATE)]
