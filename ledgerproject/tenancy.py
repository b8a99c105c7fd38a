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

from typing import Any

from django.db import models
from django.db.backends.ddl_references import Columns, ForeignKeyName, Statement, Table
from django.db.migrations.operations.base import Operation
from django.db.models.expressions import Col
from django.db.models.lookups import Exact

ORGANIZATION = "organization_id"

# Distributed by organization_id and co-located: every row of one organization on one node.
TENANT_TABLES = (
    "organizations_ledger",
    "organizations_portfolio",
    "organizations_product",
    "organizations_account",
    "organizations_balance",
    "instruments_instrument",
    "instruments_rate",
    "templates_dsl_transactiontemplate",
    "transactions_transaction",
    "transactions_operation",
    "transactions_idempotencykey",
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
COORDINATOR_TABLES = (
    "outbox_event",
    "outbox_webhooksubscription",
    "outbox_delivery",
    "outbox_deliveryattempt",
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
    also strips the one-column references Django writes and appends the composite ones.)"""

    composite_fks_inline = False

    def _iter_column_sql(self, column_db_type, params, model, field, *args: Any, **kwargs: Any):
        parts = super()._iter_column_sql(  # type: ignore[misc]
            column_db_type, params, model, field, *args, **kwargs
        )
        for part in parts:
            if part == "PRIMARY KEY" and self._composite_primary_key(model):
                continue
            yield part

    def _composite_primary_key(self, model) -> bool:
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
        if self._composite_primary_key(model):
            extra = [f"PRIMARY KEY {columns}"]
        else:  # named: Django's SQLite introspection misreads an unnamed table constraint
            name = quote(model._meta.db_table.removeprefix("new__") + "_tenant_key")
            extra = [f"CONSTRAINT {name} UNIQUE {columns}"]
        if self.composite_fks_inline:
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

    def _create_fk_sql(self, model, field, suffix):
        if not is_tenant_foreign_key(model, field):
            return super()._create_fk_sql(model, field, suffix)  # type: ignore[misc]
        quote = self.quote_name  # type: ignore[attr-defined]
        table = model._meta.db_table
        to_table = field.target_field.model._meta.db_table
        from_columns = [ORGANIZATION, field.column]
        to_columns = [ORGANIZATION, field.target_field.column]
        return Statement(
            self.sql_create_fk,  # type: ignore[attr-defined]
            table=Table(table, quote),
            name=ForeignKeyName(
                table,
                from_columns,
                to_table,
                to_columns,
                suffix,
                lambda *a, **k: quote(self._create_index_name(*a, **k)),  # type: ignore[attr-defined]
            ),
            column=Columns(table, from_columns, quote),
            to_table=Table(to_table, quote),
            to_column=Columns(to_table, to_columns, quote),
            deferrable=self.connection.ops.deferrable_sql(),  # type: ignore[attr-defined]
        )

    def add_field(self, model, field):
        if is_tenant_foreign_key(model, field) and self.composite_fks_inline:
            # SQLite: a composite foreign key comes only with the table, remade with it.
            return self._remake_table(model, create_field=field)  # type: ignore[attr-defined]
        if is_tenant_foreign_key(model, field):
            # Not inline: the deferred statement of ``_create_fk_sql`` is the composite one.
            setattr(self, "sql_create_column_inline_fk", None)  # noqa: B010 - the instance's
            try:
                return super().add_field(model, field)  # type: ignore[misc]
            finally:
                delattr(self, "sql_create_column_inline_fk")
        return super().add_field(model, field)  # type: ignore[misc]


class TenantKeys(Operation):
    """Give every tenant table of a database created before the composite keys, keeping its
    rows: a no-op where they are already there (a database created since, by the backends'
    editors). PostgreSQL changes the constraints in place; SQLite, which cannot alter a primary
    key, remakes each table (Django's own copy-and-rename, with the editor above)."""

    reversible = False
    reduces_to_sql = False

    def state_forwards(self, app_label, state):
        pass

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        models_by_table = {
            model._meta.db_table: model
            for model in (to_state.apps.get_model(*key) for key in to_state.models)
        }
        tenant_models = [models_by_table[table] for table in TENANT_TABLES]
        connection = schema_editor.connection
        if connection.vendor == "sqlite":
            for model in tenant_models:
                if not _has_tenant_key(connection, model):
                    schema_editor._remake_table(model)
            return
        single = [m for m in tenant_models if not _has_tenant_key(connection, m)]
        if not single:
            return
        # The one-column foreign keys between tenant tables go first: they hold the old keys.
        for model in tenant_models:
            for field in tenant_foreign_keys(model):
                for name in schema_editor._constraint_names(
                    model, [field.column], foreign_key=True
                ):
                    _ddl(
                        schema_editor,
                        schema_editor._delete_constraint_sql(
                            schema_editor.sql_delete_fk, model, name
                        ),
                    )
        for model in single:
            for name in schema_editor._constraint_names(model, primary_key=True):
                _ddl(schema_editor, schema_editor._delete_primary_key_sql(model, name))
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


def _ddl(schema_editor: Any, statement: Any) -> None:
    """Run a DDL statement that Django's schema editor composed from the models' metadata and
    the database's own catalog (table, column and constraint names; never a request's input)."""
    schema_editor.execute(statement)


def drop_foreign_keys(schema_editor: Any, models_: list[Any]) -> None:
    """Drop every foreign key of these tenant tables (``manage.py distribute``: Citus refuses a
    key between a table it manages and one it does not yet; ``ensure_foreign_keys`` puts them
    back)."""
    for model in models_:
        for name in schema_editor._constraint_names(model, foreign_key=True):
            _ddl(
                schema_editor,
                schema_editor._delete_constraint_sql(schema_editor.sql_delete_fk, model, name),
            )


def ensure_foreign_keys(schema_editor: Any, models_: list[Any]) -> None:
    """Every foreign key of these tenant tables that the models declare, where missing:
    composite to another tenant table, one column to any other table."""
    for model in models_:
        composite = tenant_foreign_keys(model)
        for field in model._meta.local_fields:
            if not (isinstance(field, models.ForeignKey) and getattr(field, "db_constraint", True)):
                continue
            columns = [ORGANIZATION, field.column] if field in composite else [field.column]
            if not schema_editor._constraint_names(model, columns, foreign_key=True):
                _ddl(
                    schema_editor,
                    schema_editor._create_fk_sql(model, field, "_fk_%(to_table)s_%(to_column)s"),
                )


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
    """For the tenant models: ``save()`` of an existing row names its organization in the
    ``WHERE`` (Citus routes the ``UPDATE`` to the row's node) and never rewrites
    ``organization_id``, which Citus refuses even unchanged, and which no row changes."""

    def _do_update(self, base_qs: Any, using: Any, pk_val: Any, values: Any, *rest: Any) -> Any:
        values = [value for value in values if value[0].attname != ORGANIZATION]
        base_qs = base_qs.filter(organization_id=self.organization_id)  # type: ignore[attr-defined]
        return super()._do_update(base_qs, using, pk_val, values, *rest)  # type: ignore[misc]
