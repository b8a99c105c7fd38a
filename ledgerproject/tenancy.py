"""The tenant tables and their keys: the one place that says which tables hold one
organization's rows, and what that means for the schema on every database.

A tenant table's primary key is ``(organization_id, id)`` and every foreign key from a tenant
table to another one is ``(organization_id, <x>_id)`` referencing ``(organization_id, id)``. That
is the layout Citus needs to distribute the tenant tables by ``organization_id`` and keep each
organization on one node (``manage.py distribute``, docs/SCALING.md), and it is the schema on
single-node PostgreSQL and on SQLite too: one schema, whatever the database.

Django's model keeps ``id`` as its primary key (the ORM, the admin and every foreign key address
a row by ``id``, which is a UUIDv7 and so unique in practice everywhere); the database's
constraints carry the organization. The schema editors of the project's database backends
(``ledgerproject.backends``) write those constraints whenever Django creates a tenant table or
adds a foreign key to one, and ``TenantKeys`` (the migration ``organizations/0005``) converts a
database created before, keeping its rows."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from typing import Any

from django.db import DatabaseError, models, router
from django.db.backends.ddl_references import Columns, Statement, Table
from django.db.backends.utils import truncate_name
from django.db.migrations.operations.base import Operation
from django.db.models.expressions import Col
from django.db.models.lookups import Exact

ORGANIZATION = "organization_id"


def _ddl(schema_editor: Any, statement: Any, params: Any = None) -> None:
    """Run a DDL statement composed here from the models' metadata and the database's own
    catalog (table, column, index and constraint names; never a request's input)."""
    schema_editor.execute(statement, params)


# Distributed by organization_id and co-located: every row of one organization on one node.
TENANT_TABLES = (
    "organizations_ledger",
    "organizations_portfolio",
    "organizations_product",
    "organizations_account",
    "organizations_balance",
    "organizations_balancemonitor",
    "instruments_instrument",
    "instruments_rate",
    "instruments_ratevalue",
    "templates_dsl_transactiontemplate",
    "transactions_transaction",
    "transactions_operation",
    "transactions_idempotencykey",
    "transactions_scheduledposting",
    "transactions_approvalrule",
    "transactions_approval",
)
# Small and read everywhere: replicated to every node. An organization is the tenant itself
# (its parent may live anywhere); a token reaches across organizations.
REFERENCE_TABLES = (
    "organizations_organization",
    "organizations_authepoch",
    "organizations_apitoken",
    "organizations_apitoken_organizations",
)
# The event outbox and its webhook deliveries stay on the coordinator, as one ordered log whose
# order rests on one server's transaction ids, but Citus manages them (Citus local tables): a
# posting writes its event there and its rows on a worker, and only then does Citus commit the
# two together (two-phase commit); with a plain table it would commit them one after the other.
# The journal's blocks seal those events, in their order, so they live beside them.
COORDINATOR_TABLES = (
    "outbox_event",
    "outbox_webhooksubscription",
    "outbox_delivery",
    "outbox_deliveryattempt",
    "journal_block",
)
# Everything else (Django's auth, admin, sessions and cache) stays a plain coordinator table.

# With the names they had in earlier migrations (the balances moved app, and table, once).
_TENANT = frozenset((*TENANT_TABLES, "transactions_balance"))


def is_tenant(model: type[models.Model]) -> bool:
    # "new__<table>": the copy SQLite's editor builds when it remakes a table.
    return model._meta.db_table.removeprefix("new__") in _TENANT


def is_tenant_foreign_key(model: type[models.Model], field: Any) -> bool:
    """A foreign key from a tenant table to a tenant table: composite in the database."""
    return (
        is_tenant(model)
        and isinstance(field, models.ForeignKey)
        and is_tenant(field.target_field.model)
    )


def tenant_foreign_keys(model: type[models.Model]) -> list[models.ForeignKey]:
    """The foreign keys of a tenant table that point at a tenant table."""
    return [f for f in model._meta.local_fields if is_tenant_foreign_key(model, f)]  # type: ignore[misc]


class TenantKeysSchemaMixin:
    """For a backend's schema editor: tenant tables get the composite keys at creation, and a
    foreign key added to one is composite. (SQLite writes foreign keys inline, so its editor
    also strips the one-column references Django writes and appends the composite ones.) Only
    the editor's public methods are overridden: ``column_sql``, ``table_sql`` and
    ``add_field``."""

    composite_fks_inline = False
    deferred_sql: list[Any]  # the editor's: statements run when it closes

    def column_sql(self, model, field, include_default=False):
        sql, params = super().column_sql(model, field, include_default)  # type: ignore[misc]
        if sql is not None and field.primary_key and self.composite_primary_key(model):
            # The key is the table's, (organization_id, id): ``table_sql`` writes it.
            assert " PRIMARY KEY" in sql, sql
            sql = sql.replace(" PRIMARY KEY", "", 1)
        return sql, params

    def composite_primary_key(self, model) -> bool:
        """SQLite numbers rows only in a one-column ``INTEGER PRIMARY KEY``: there an
        auto-numbered tenant table (idempotency keys) keeps it, and carries the composite key
        as a unique constraint, which the foreign keys may reference all the same."""
        if not is_tenant(model):
            return False
        return not (
            self.composite_fks_inline
            and model._meta.pk.get_internal_type() in ("AutoField", "BigAutoField")
        )

    def table_sql(self, model):
        sql, params = super().table_sql(model)  # type: ignore[misc]
        if not is_tenant(model):
            return sql, params
        quote = self.quote_name  # type: ignore[attr-defined]
        columns = f"({quote(ORGANIZATION)}, {quote(model._meta.pk.column)})"
        if self.composite_primary_key(model):
            extra = [f"PRIMARY KEY {columns}"]
        else:  # named: Django's SQLite introspection misreads an unnamed table constraint
            name = quote(model._meta.db_table.removeprefix("new__") + "_tenant_key")
            extra = [f"CONSTRAINT {name} UNIQUE {columns}"]
        if not self.composite_fks_inline:
            self.composite_foreign_keys_later(model, tenant_foreign_keys(model))
        else:
            for field in tenant_foreign_keys(model):
                inline = " " + self.sql_create_inline_fk % {  # type: ignore[attr-defined]
                    "to_table": quote(field.target_field.model._meta.db_table),
                    "to_column": quote(field.target_field.column),
                }
                sql = sql.replace(inline, "")
                extra.append(
                    f"FOREIGN KEY ({quote(ORGANIZATION)}, {quote(field.column)}) REFERENCES "
                    f"{quote(field.target_field.model._meta.db_table)} "
                    f"({quote(ORGANIZATION)}, {quote(field.target_field.column)})"
                    # what follows the referenced column in Django's own (DEFERRABLE ...)
                    f"{self.sql_create_inline_fk.split('%(to_column)s)')[1]}"  # type: ignore[attr-defined]
                )
        assert sql.endswith(")"), sql
        return sql[:-1] + ", " + ", ".join(extra) + ")", params

    def composite_foreign_keys_later(self, model, fields: list[models.ForeignKey]) -> None:
        """Django has queued a one-column foreign key for each of these fields in
        ``deferred_sql`` (run when the editor closes, once every table exists): each becomes
        the composite one."""
        table = model._meta.db_table
        self.deferred_sql = [
            statement
            for statement in self.deferred_sql
            if not (
                isinstance(statement, Statement)
                and statement.template == self.sql_create_fk  # type: ignore[attr-defined]
                and any(statement.references_column(table, f.column) for f in fields)
            )
        ]
        self.deferred_sql.extend(foreign_key_sql(self, model, f) for f in fields)

    def add_field(self, model, field):
        if not is_tenant_foreign_key(model, field):
            return super().add_field(model, field)  # type: ignore[misc]
        if self.composite_fks_inline:
            # SQLite: a composite foreign key comes only with the table, made again with it.
            # ``field.model`` is the model as the migration leaves it (AddField passes the new
            # state's field), so the table is made with the field.
            return remake_table(self, field.model, added=field)
        # Not inline: Django queues the foreign key, which becomes the composite one.
        setattr(self, "sql_create_column_inline_fk", None)  # noqa: B010 - the instance's
        try:
            super().add_field(model, field)  # type: ignore[misc]
        finally:
            delattr(self, "sql_create_column_inline_fk")
        self.composite_foreign_keys_later(model, [field])


def foreign_key_sql(schema_editor: Any, model: Any, field: Any) -> Statement:
    """The statement that adds the field's foreign key: ``(organization_id, <x>_id)`` to a
    tenant table, one column to any other. The name is the project's own, whatever made the
    key before; nothing looks a key up by its name."""
    quote = schema_editor.quote_name
    table = model._meta.db_table
    to_table = field.target_field.model._meta.db_table
    columns = [field.column]
    to_columns = [field.target_field.column]
    if is_tenant_foreign_key(model, field):
        columns, to_columns = [ORGANIZATION, *columns], [ORGANIZATION, *to_columns]
    name = truncate_name(
        f"{table}_{'_'.join(columns)}_fk", schema_editor.connection.ops.max_name_length()
    )
    return Statement(
        schema_editor.sql_create_fk,
        table=Table(table, quote),
        name=quote(name),
        column=Columns(table, columns, quote),
        to_table=Table(to_table, quote),
        to_column=Columns(to_table, to_columns, quote),
        deferrable=schema_editor.connection.ops.deferrable_sql(),
    )


def constraint_names(schema_editor: Any, model: Any, kind: str, columns: list[str] | None = None):
    """The names of the table's constraints of this kind (``"primary_key"``, ``"foreign_key"``),
    on these columns when given, as the database's catalog lists them."""
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        found = connection.introspection.get_constraints(cursor, model._meta.db_table)
    return [
        name
        for name, constraint in found.items()
        if constraint[kind] and (columns is None or constraint["columns"] == columns)
    ]


def drop_constraint(schema_editor: Any, model: Any, name: str) -> None:
    _ddl(
        schema_editor,
        schema_editor.sql_delete_constraint
        % {
            "table": schema_editor.quote_name(model._meta.db_table),
            "name": schema_editor.quote_name(name),
        },
    )


@contextlib.contextmanager
def triggers_set_aside(schema_editor: Any) -> Iterator[None]:
    """SQLite: the database's triggers dropped while a table is made again, then made again
    from their own text. A trigger that names the table would stop its rename ("no such
    table"), and the table's own triggers would go with the old copy."""
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name")
        kept = cursor.fetchall()
    for name, _ in kept:
        _ddl(schema_editor, f"DROP TRIGGER {schema_editor.quote_name(name)}")
    yield
    for _, text in kept:
        _ddl(schema_editor, text)


def remake_table(schema_editor: Any, model: Any, added: Any = None) -> None:
    """SQLite: make the table again as the schema editor writes ``model`` (with ``added``, a
    field it gains), keeping its rows, as SQLite's documented way to change what ``ALTER
    TABLE`` cannot: rename the old table, create the new one, copy the rows, drop the old.
    SQLite rewrites the references of other tables to a renamed one unless
    ``legacy_alter_table`` is on (Django's editor has already turned the enforcement of
    foreign keys off); with it, they keep naming the table, which is the new one."""
    with triggers_set_aside(schema_editor):
        _remake(schema_editor, model, added)


def _remake(schema_editor: Any, model: Any, added: Any) -> None:
    table = model._meta.db_table
    old = f"{table}__old"
    quote = schema_editor.quote_name
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = %s "
            "AND sql IS NOT NULL",
            [table],
        )
        indexes = [name for (name,) in cursor.fetchall()]
        kept = [
            column.name for column in connection.introspection.get_table_description(cursor, table)
        ]
    for name in indexes:  # an index's name is the schema's: the new table's take them again
        _ddl(schema_editor, f"DROP INDEX {quote(name)}")
    schema_editor.execute("PRAGMA legacy_alter_table = ON")
    _ddl(schema_editor, f"ALTER TABLE {quote(table)} RENAME TO {quote(old)}")
    schema_editor.execute("PRAGMA legacy_alter_table = OFF")
    schema_editor.deferred_sql = [  # what was queued for the old table is queued again below
        statement
        for statement in schema_editor.deferred_sql
        if not (isinstance(statement, Statement) and statement.references_table(table))
    ]
    schema_editor.create_model(model)
    columns = ", ".join(quote(column) for column in kept)
    into, values, params = columns, columns, []
    if added is not None:
        into += f", {quote(added.column)}"
        values += ", %s"
        params.append(schema_editor.effective_default(added))
    _ddl(
        schema_editor,
        f"INSERT INTO {quote(table)} ({into}) SELECT {values} FROM {quote(old)}",
        params,
    )
    _ddl(schema_editor, f"DROP TABLE {quote(old)}")


class TenantKeys(Operation):
    """Give every tenant table of a database created before the composite keys, keeping its
    rows: a no-op where they are already there (a database created since, by the backends'
    editors). PostgreSQL changes the constraints in place; SQLite, which cannot alter a primary
    key, makes each table again (``remake_table``)."""

    reversible = False
    reduces_to_sql = False

    def state_forwards(self, app_label, state):
        pass

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        models_by_table = {
            model._meta.db_table: model
            for model in (to_state.apps.get_model(*key) for key in to_state.models)
        }
        # The tenant tables of the migration's time: those made since are made with the keys.
        tenant_models = [models_by_table[t] for t in TENANT_TABLES if t in models_by_table]
        connection = schema_editor.connection
        single = [m for m in tenant_models if not _has_tenant_key(connection, m)]
        if not single:
            return
        if schema_editor.composite_fks_inline:
            for model in single:
                remake_table(schema_editor, model)
            return
        # The one-column foreign keys between tenant tables go first: they hold the old keys.
        for model in tenant_models:
            for field in tenant_foreign_keys(model):
                for name in constraint_names(schema_editor, model, "foreign_key", [field.column]):
                    drop_constraint(schema_editor, model, name)
        for model in single:
            for name in constraint_names(schema_editor, model, "primary_key"):
                drop_constraint(schema_editor, model, name)
            _ddl(
                schema_editor,
                schema_editor.sql_create_pk
                % {
                    "table": schema_editor.quote_name(model._meta.db_table),
                    "name": schema_editor.quote_name(f"{model._meta.db_table}_pkey"),
                    "columns": f"{ORGANIZATION}, id",
                },
            )
        ensure_foreign_keys(schema_editor, tenant_models)

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        raise NotImplementedError("the tenant keys are not taken back")

    def describe(self) -> str:
        return "Composite (organization_id, id) keys on the tenant tables"


# Whether this database's tenant tables are distributed already (a Citus coordinator after
# ``manage.py distribute``): the first of them, which the others are co-located with, is.
IS_DISTRIBUTED = (
    "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') "
    "AND EXISTS (SELECT 1 FROM pg_class WHERE relname = 'pg_dist_partition')"
)
FIRST_DISTRIBUTED = "SELECT 1 FROM pg_dist_partition WHERE logicalrelid = %s::regclass"
DISTRIBUTE = "SELECT create_distributed_table(%s, %s, colocate_with => %s)"


class DistributedWithTheOthers(Operation):
    """Right after the ``CreateModel`` of a new tenant table: on a database whose tenant
    tables are distributed already, distribute the new one too, co-located with them, before
    the migration's end makes its foreign keys (Citus refuses one from a table it does not
    manage to one it distributes). Elsewhere nothing: a database distributed later has it
    distributed by ``manage.py distribute`` with the rest."""

    reversible = True
    reduces_to_sql = False

    def __init__(self, table: str) -> None:
        self.table = table

    def deconstruct(self) -> tuple[str, list[Any], dict[str, Any]]:
        return self.__class__.__name__, [self.table], {}

    def state_forwards(self, app_label, state):
        pass

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        connection = schema_editor.connection
        if connection.vendor != "postgresql":
            return
        with connection.cursor() as cursor:
            cursor.execute(IS_DISTRIBUTED)
            if not cursor.fetchone()[0]:
                return
            cursor.execute(FIRST_DISTRIBUTED, [TENANT_TABLES[0]])
            if cursor.fetchone() is None:
                return
            cursor.execute(DISTRIBUTE, [self.table, ORGANIZATION, TENANT_TABLES[0]])

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        pass  # the table goes with the model

    def describe(self) -> str:
        return f"Distribute {self.table} where the tenant tables are"


def drop_foreign_keys(schema_editor: Any, models_: list[Any]) -> None:
    """Drop every foreign key of these tenant tables (``manage.py distribute``: Citus refuses a
    key between a table it manages and one it does not yet; ``ensure_foreign_keys`` puts them
    back)."""
    for model in models_:
        for name in constraint_names(schema_editor, model, "foreign_key"):
            drop_constraint(schema_editor, model, name)


def ensure_foreign_keys(schema_editor: Any, models_: list[Any]) -> None:
    """Every foreign key of these tenant tables that the models declare, where missing:
    composite to another tenant table, one column to any other table."""
    for model in models_:
        composite = tenant_foreign_keys(model)
        for field in model._meta.local_fields:
            if not (isinstance(field, models.ForeignKey) and getattr(field, "db_constraint", True)):
                continue
            columns = [ORGANIZATION, field.column] if field in composite else [field.column]
            if not constraint_names(schema_editor, model, "foreign_key", columns):
                _ddl(schema_editor, foreign_key_sql(schema_editor, model, field))


def _has_tenant_key(connection, model) -> bool:
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, model._meta.db_table)
    # (SQLite's introspection lists a key's columns in the table's order, not the key's.)
    return any(
        (c["primary_key"] or c["unique"]) and sorted(c["columns"]) == ["id", ORGANIZATION]
        for c in constraints.values()
    )


class _TenantJoin:
    """A join along a foreign key between tenant tables also matches ``organization_id``, so
    that Citus sees both sides on one node (it refuses a join between distributed tables
    that leaves out the distribution column); on one server it is one more equal column of
    the composite key. Migrations see Django's own field: the database constraint is the
    schema editor's business."""

    def get_extra_restriction(self, alias: str, related_alias: str) -> Any:
        own = self.model._meta.get_field("organization")  # type: ignore[attr-defined]
        target = self.related_model._meta.get_field("organization")  # type: ignore[attr-defined]
        return Exact(Col(alias, target), Col(related_alias, own))

    def deconstruct(self) -> Any:
        name, _path, args, kwargs = super().deconstruct()  # type: ignore[misc]
        return name, self._django_path, args, kwargs  # type: ignore[attr-defined]


class TenantForeignKey(_TenantJoin, models.ForeignKey):
    _django_path = "django.db.models.ForeignKey"


class TenantOneToOneField(_TenantJoin, models.OneToOneField):
    _django_path = "django.db.models.OneToOneField"


class TenantRow:
    """For the tenant models: ``save()`` of an existing row is one ``UPDATE`` of its loaded
    fields (or of ``update_fields``) that names its organization in the ``WHERE`` (Citus routes
    it to the row's node) and never sets ``organization_id``, which Citus refuses even
    unchanged, and which no row changes. A row that is not stored is an error rather than an
    insert (as with Django's ``force_update``, which takes this way for a new instance too). A
    new row is Django's own save. (No model of the project listens to the save signals.)"""

    def save(
        self,
        *,
        force_insert: bool | tuple[Any, ...] = False,
        force_update: bool = False,
        using: str | None = None,
        update_fields: Iterable[str] | None = None,
    ) -> None:
        if force_insert and force_update:
            raise ValueError("Cannot force both insert and updating in model saving.")
        if force_insert or (self._state.adding and not force_update):  # type: ignore[attr-defined]
            super().save(force_insert=force_insert, using=using, update_fields=update_fields)  # type: ignore[misc]
            return
        model: Any = type(self)
        using = using or router.db_for_write(model, instance=self)
        concrete = [f for f in self._meta.concrete_fields if not f.primary_key]  # type: ignore[attr-defined]
        if update_fields is None:
            deferred = self.get_deferred_fields()  # type: ignore[attr-defined]
            fields = [f for f in concrete if f.attname not in deferred]
        else:
            wanted = set(update_fields)
            fields = [f for f in concrete if {f.name, f.attname} & wanted]
            known = {f.name for f in fields} | {f.attname for f in fields}
            if wanted - known:
                raise ValueError(f"update_fields names no field: {sorted(wanted - known)}")
        values = {f.attname: f.pre_save(self, False) for f in fields if f.attname != ORGANIZATION}
        if not values:
            return
        manager: Any = model._default_manager
        rows = manager.db_manager(using).filter(
            pk=self.pk,  # type: ignore[attr-defined]
            organization_id=self.organization_id,  # type: ignore[attr-defined]
        )
        if rows.update(**values) != 1:
            raise DatabaseError(f"{type(self).__name__} {self.pk} is not stored")  # type: ignore[attr-defined]
        self._state.db = using  # type: ignore[attr-defined]
