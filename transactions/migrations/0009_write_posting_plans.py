"""``ledger_write_posting`` again, with the same writes and the same guard, written so that
PostgreSQL plans the usual posting's guard once per connection instead of on every call.

A statement in a PL/pgSQL function is prepared, and PostgreSQL plans it for its parameters
("custom") until a generic plan does not look dearer. An array parameter looks like ten
elements to the planner, so the guard, which read its assets and accounts with ``= ANY``, was
planned on every posting (about 220 us of PostgreSQL's time, docs/PERFORMANCE.md). For the
usual posting (one asset, at most two accounts) the guard now names them as scalars
(``p_assets[1]``, ``IN (p_accounts[1], p_accounts[2])``), which the planner sees exactly: its
generic plan is kept. Any other posting (several assets, more accounts, a batch) runs the same
guard over the arrays, as before. Both forms are made from one text (``GUARD``); on Citus
either is still one statement routed to the organization's worker.

The function is otherwise that of 0007: its writes are taken from that migration's text."""

import importlib

from django.db import migrations

from ledgerproject.db import postgresql_only

# 0007's function: this migration's way back, and the source of its writes, taken unchanged.
PREVIOUS = importlib.import_module("transactions.migrations.0007_write_posting_function").CREATE
WRITES = PREVIOUS[
    PREVIOUS.index("    INSERT INTO transactions_transaction") : PREVIOUS.index("    RETURN true;")
]

# The guard, in one statement: the ledger active (and held against its delete), every asset an
# active instrument of it, no touched account deleted.
GUARD = """
        (SELECT count(*) FROM instruments_instrument
          WHERE organization_id = p_org AND ledger_id = p_ledger
            AND code {assets} AND deleted_at IS NULL) = cardinality(p_assets)
        AND NOT EXISTS (SELECT 1 FROM organizations_account
          WHERE organization_id = p_org AND id {accounts} AND deleted_at IS NOT NULL)
        AND EXISTS (SELECT 1 FROM organizations_ledger
          WHERE organization_id = p_org AND id = p_ledger AND deleted_at IS NULL
          FOR KEY SHARE)"""
USUAL = GUARD.format(assets="= p_assets[1]", accounts="IN (p_accounts[1], p_accounts[2])")
ANY = GUARD.format(assets="= ANY(p_assets)", accounts="= ANY(p_accounts)")

CREATE = f"""
CREATE OR REPLACE FUNCTION ledger_write_posting(
    p_org uuid, p_ledger uuid, p_assets varchar[], p_accounts uuid[],
    p_transactions jsonb, p_operations jsonb, p_events jsonb, p_balances jsonb
) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    IF cardinality(p_assets) = 1 AND cardinality(p_accounts) <= 2 THEN
        IF NOT ({USUAL}
        ) THEN
            RETURN false;
        END IF;
    ELSIF NOT ({ANY}
    ) THEN
        RETURN false;
    END IF;
{WRITES}    RETURN true;
END;
$$;
"""


class Migration(migrations.Migration):
    dependencies = [("transactions", "0008_redundant_indexes")]

    operations = [postgresql_only(CREATE, PREVIOUS)]
