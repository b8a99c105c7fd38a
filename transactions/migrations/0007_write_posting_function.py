"""On PostgreSQL, the posting's write as one function, ``ledger_write_posting``: the guard (the
ledger active and held against its delete, every asset an active instrument, no touched account
deleted), then the new transactions, their operations, their events and the new balances, each
as one plain statement, all or nothing; it answers false, having written nothing, when the
guard does not hold.

It replaces one data-modifying CTE that did the same in one statement. Both cost the service one
round trip, but Citus runs a CTE like that as subplans whose intermediate results it sends to
every worker, so a posting needed every node up; each statement here is routed on its own
(the guard and the balances' UPDATE to the organization's worker, the inserts through the
coordinator into that worker's shards, the event into the coordinator's outbox). See
docs/SCALING.md.

Each version of the function is a file of transactions/sql/ (``ledger_write_posting.<the
migration that installs it>.sql``); the highest number is the current text. A migration that
changes one of the tables it writes installs a new version."""

from django.db import migrations

from ledgerproject.migration_ops import postgresql_sql_files


class Migration(migrations.Migration):
    dependencies = [
        ("transactions", "0006_transaction_expires_at"),
        ("outbox", "0001_events_and_webhooks"),
    ]

    operations = [
        postgresql_sql_files("transactions", "ledger_write_posting.0007.sql", "ledger_write_posting.drop.sql"),
    ]
