"""``ledger_write_posting`` again, with the same writes and the same guard, written so that
PostgreSQL plans the usual posting's guard once per connection instead of on every call.

A statement in a PL/pgSQL function is prepared, and PostgreSQL plans it for its parameters
("custom") until a generic plan does not look dearer. An array parameter looks like ten
elements to the planner, so the guard, which read its assets and accounts with ``= ANY``, was
planned on every posting. For the usual posting (one asset, at most two accounts) the guard
now names them as scalars (``p_assets[1]``, ``IN (p_accounts[1], p_accounts[2])``), which the
planner sees exactly: its generic plan is kept. Any other posting (several assets, more
accounts, a batch) runs the same guard over the arrays, as before; on Citus either is still one
statement routed to the organization's worker."""

from django.db import migrations

from ledgerproject.migration_ops import postgresql_sql_files


class Migration(migrations.Migration):
    dependencies = [("transactions", "0008_redundant_indexes")]

    operations = [
        postgresql_sql_files("transactions", "ledger_write_posting.0009.sql", "ledger_write_posting.0007.sql"),
    ]
