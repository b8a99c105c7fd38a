"""``ledger_write_posting_or_refuse``: ``ledger_write_posting`` (0013), raising instead of
answering false when the guard does not hold.

The engine sends the usual posting's write and its COMMIT in one round trip
(``pipeline.run_and_commit``): the COMMIT runs unless the write fails, so a write whose guard does not
hold must fail, or the COMMIT would keep what the transaction wrote before it (its idempotency
keys). The error's SQLSTATE is ``LG001`` (``writes.GUARD_BROKEN``): the engine rolls back and
posts again the ordinary way (``engine._run``), where the write answers false and the guard's
refusal is explained as before. ``ledger_write_posting`` itself is unchanged."""

import importlib

from django.db import migrations

from ledgerproject.db import postgresql_only

# 0010's signature of ``ledger_write_posting`` (unchanged since), under this function's name
WRITE = importlib.import_module("transactions.migrations.0010_write_posting_balance_index")
SIGNATURE = WRITE.SIGNATURE.replace(
    "FUNCTION ledger_write_posting(", "FUNCTION ledger_write_posting_or_refuse("
)
assert SIGNATURE != WRITE.SIGNATURE

CREATE = f"""{SIGNATURE}BEGIN
    IF NOT ledger_write_posting(p_org, p_ledger, p_assets, p_accounts, p_transactions,
                                p_operations, p_events, p_balances) THEN
        RAISE EXCEPTION 'ledger_write_posting: the guard does not hold; nothing was written'
            USING ERRCODE = 'LG001';
    END IF;
    RETURN true;
END;
$$;
"""
DROP = """
DROP FUNCTION IF EXISTS ledger_write_posting_or_refuse(
    uuid, uuid, varchar[], uuid[], jsonb, jsonb, jsonb, jsonb
);
"""


class Migration(migrations.Migration):
    dependencies = [("transactions", "0013_write_posting_balances_as_objects")]

    operations = [postgresql_only(CREATE, DROP)]
