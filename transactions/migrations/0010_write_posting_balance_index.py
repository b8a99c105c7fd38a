"""``ledger_write_posting`` again: the usual posting's balances are updated through an index.

The balance update joined the table with the rows sent (``jsonb_to_recordset``), which the
planner takes for a hundred rows; against a ledger of a thousand accounts it found a hash join
over a sequential scan of every balance cheaper than looking two up, and ran it on every
posting (0.39 ms of PostgreSQL's time, against 0.06 ms through the index: docs/PERFORMANCE.md).
For the usual posting (one asset, at most two accounts, the form 0009 introduced) the update
now also names the two accounts, which the planner sees exactly, so it reads their balances by
``balance_account_uniq``. The balances written are those of the accounts the guard names
(``engine`` and ``states`` build both from the same list); the function checks that every row
sent was updated, and raises otherwise, so a caller that broke that rule could not lose a
balance silently. Any other posting runs the update of 0007 unchanged.

Signature, guard and inserts are those of 0009 and 0007, taken from their texts."""

import importlib

from django.db import migrations

from ledgerproject.db import postgresql_only

PREVIOUS_MIGRATION = importlib.import_module("transactions.migrations.0009_write_posting_plans")
PREVIOUS = PREVIOUS_MIGRATION.CREATE  # this migration's way back
WRITES = PREVIOUS_MIGRATION.WRITES
UPDATE_AT = WRITES.index("    UPDATE organizations_balance")
INSERTS, UPDATE = WRITES[:UPDATE_AT], WRITES[UPDATE_AT:]
SIGNATURE = PREVIOUS[: PREVIOUS.index("BEGIN\n")]  # CREATE ... AS $$, unchanged
JOIN = "WHERE b.organization_id = p_org AND b.id = v.id;"
assert UPDATE.rstrip().endswith(JOIN), UPDATE
USUAL_UPDATE = UPDATE.replace(
    JOIN,
    "WHERE b.organization_id = p_org AND b.account_id IN (p_accounts[1], p_accounts[2])\n"
    "      AND b.id = v.id;\n"
    "        GET DIAGNOSTICS updated = ROW_COUNT;\n"
    "        IF updated <> jsonb_array_length(p_balances) THEN\n"
    "            RAISE EXCEPTION 'ledger_write_posting: % of % balances updated', updated,\n"
    "                jsonb_array_length(p_balances);\n"
    "        END IF;",
)

CREATE = f"""{SIGNATURE}DECLARE
    usual boolean := cardinality(p_assets) = 1 AND cardinality(p_accounts) <= 2;
    updated bigint;
BEGIN
    IF usual THEN
        IF NOT ({PREVIOUS_MIGRATION.USUAL}
        ) THEN
            RETURN false;
        END IF;
    ELSIF NOT ({PREVIOUS_MIGRATION.ANY}
    ) THEN
        RETURN false;
    END IF;
{INSERTS}    IF usual THEN
    {USUAL_UPDATE}
    ELSE
    {UPDATE}    END IF;
    RETURN true;
END;
$$;
"""


class Migration(migrations.Migration):
    dependencies = [("transactions", "0009_write_posting_plans")]

    operations = [postgresql_only(CREATE, PREVIOUS)]
