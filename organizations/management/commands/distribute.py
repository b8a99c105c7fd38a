"""manage.py distribute: lay a migrated database on a Citus coordinator out for many nodes.

The tenant tables are distributed by ``organization_id`` and co-located (every row of one
organization on one worker), the small shared tables become reference tables (a copy on every
node), the event outbox stays on the coordinator as tables Citus manages (so that a posting and
its event commit together), and Django's own tables stay as they are (``ledgerproject.tenancy``
lists them all). Rows already there move with their tables. Running it
again changes nothing. It refuses a database without Citus, and one not migrated yet.

On Citus, the authentication epoch's triggers cannot run (they would write the coordinator's
sequence from a worker), so they are dropped and the epoch's row is removed: with no epoch, no
process keeps tokens in memory, and every request reads its token from the database
(docs/SECURITY.md)."""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from ledgerproject.db import by_database
from ledgerproject.tenancy import (
    COORDINATOR_TABLES,
    ORGANIZATION,
    REFERENCE_TABLES,
    TENANT_TABLES,
    drop_foreign_keys,
    ensure_foreign_keys,
)

# The table the others are co-located with: distributed first.
COLOCATE_WITH = TENANT_TABLES[0]

ADD_LOCAL_TABLE = "SELECT citus_add_local_table_to_metadata(%s, cascade_via_foreign_keys => true)"
# Citus restarts the identity of a table it takes over: the events' numbers go on from the last.
RESTART_EVENT_SEQUENCE = (
    "SELECT setval(pg_get_serial_sequence('outbox_event', 'seq'), "
    "(SELECT COALESCE(max(seq), 0) + 1 FROM outbox_event), false)"
)
# A transaction that touches several shards at once and then writes the outbox (a table with
# foreign keys, on the coordinator) must have used one connection per worker: Citus refuses the
# write otherwise. Sequential becomes the database's default, for every new session.
SEQUENTIAL_BY_DEFAULT = """
DO $$ BEGIN
    EXECUTE format('ALTER DATABASE %I SET citus.multi_shard_modify_mode TO %L',
                   current_database(), 'sequential');
END $$
"""
DROP_EPOCH = """
DROP TRIGGER IF EXISTS auth_epoch_bump ON organizations_apitoken;
DROP TRIGGER IF EXISTS auth_epoch_bump ON organizations_apitoken_organizations;
DROP TRIGGER IF EXISTS auth_epoch_bump ON organizations_organization;
DELETE FROM organizations_authepoch;
"""


class Command(BaseCommand):
    help = (
        "Distribute the tenant tables by organization_id on a Citus coordinator (co-located), "
        "make the shared ones reference tables; idempotent."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--shard-count",
            type=int,
            default=None,
            help="shards per tenant table (default: Citus's citus.shard_count, 32)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if not _has_citus():
            raise CommandError(
                "This database has no Citus extension: distribute runs on a Citus coordinator "
                "(CREATE EXTENSION citus, then add the workers with citus_add_node)."
            )
        existing = set(connection.introspection.table_names())
        missing = [t for t in (*TENANT_TABLES, *REFERENCE_TABLES) if t not in existing]
        if missing:
            raise CommandError(f"Run manage.py migrate first: missing {', '.join(missing)}.")
        if _single_key_tables():
            raise CommandError(
                "The tenant tables still have one-column keys: run manage.py migrate first."
            )
        done = _citus_tables()
        with connection.cursor() as cursor:
            # The append-only guard and double entry (docs/BOOKS.md) are triggers: allowed.
            cursor.execute("SET citus.enable_unsafe_triggers TO on")
            if options["shard_count"]:
                cursor.execute(
                    "SELECT set_config('citus.shard_count', %s, false)",
                    [str(options["shard_count"])],
                )
            try:
                cursor.execute(DROP_EPOCH)
                # Citus refuses a foreign key between a table it manages and one it does not
                # yet: the tenant tables' keys go while the tables move, and come back after
                # (from the models, so a run cut short is completed by the next one).
                by_table = {model._meta.db_table: model for model in apps.get_models()}
                with connection.schema_editor(atomic=False) as editor:
                    drop_foreign_keys(editor, [by_table[t] for t in TENANT_TABLES if t not in done])
                for table in TENANT_TABLES:
                    if table in done:
                        continue
                    colocate = "none" if table == COLOCATE_WITH else COLOCATE_WITH
                    cursor.execute(
                        "SELECT create_distributed_table(%s, %s, colocate_with => %s)",
                        [table, ORGANIZATION, colocate],
                    )
                    self.stdout.write(f"distributed {table} by {ORGANIZATION}")
                for table in REFERENCE_TABLES:
                    if table not in done:
                        cursor.execute("SELECT create_reference_table(%s)", [table])
                        self.stdout.write(f"reference   {table}")
                for table in COORDINATOR_TABLES:
                    if table not in _citus_tables():  # the first takes its neighbours along
                        cursor.execute(ADD_LOCAL_TABLE, [table])
                        cursor.execute(RESTART_EVENT_SEQUENCE)
                        self.stdout.write(f"coordinator {table} (and its foreign keys)")
                with connection.schema_editor(atomic=False) as editor:
                    ensure_foreign_keys(editor, [by_table[t] for t in TENANT_TABLES])
                cursor.execute(SEQUENTIAL_BY_DEFAULT)
            finally:
                cursor.execute("RESET citus.enable_unsafe_triggers")
                cursor.execute("RESET citus.shard_count")
        self.stdout.write(
            self.style.SUCCESS(
                f"{len(TENANT_TABLES)} tenant tables distributed by {ORGANIZATION}, "
                f"{len(REFERENCE_TABLES)} reference tables, the outbox on the coordinator"
                + (
                    " (all already were)"
                    if done >= {*TENANT_TABLES, *REFERENCE_TABLES, *COORDINATOR_TABLES}
                    else ""
                )
            )
        )


def _has_citus_postgresql() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_extension WHERE extname = 'citus'")
        return cursor.fetchone() is not None


def _has_citus_sqlite() -> bool:
    return False


_has_citus = by_database(postgresql=_has_citus_postgresql, sqlite=_has_citus_sqlite)


def _citus_tables() -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT logicalrelid::regclass::text FROM pg_dist_partition")
        return {row[0] for row in cursor.fetchall()}


def _single_key_tables() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.conrelid::regclass::text FROM pg_constraint c "
            "WHERE c.contype = 'p' AND c.conrelid::regclass::text = ANY(%s) "
            "AND array_length(c.conkey, 1) = 1",
            [list(TENANT_TABLES)],
        )
        return [row[0] for row in cursor.fetchall()]
