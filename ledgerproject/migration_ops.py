"""Migration operations the project's migrations share: SQL files loaded by version
(functions and triggers live in ``<app>/sql/``), statements only PostgreSQL runs, and index
drops that change nothing else."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path
from typing import Any

from django.db import migrations, models


def postgresql_only(forward_sql: str, backward_sql: str) -> Any:
    """A migration operation that runs ``forward_sql`` (and, backwards, ``backward_sql``) on
    PostgreSQL and does nothing elsewhere: the triggers and functions SQLite has no use for."""

    def run(sql: str) -> Any:
        def apply(apps: Any, schema_editor: Any) -> None:
            if schema_editor.connection.vendor == "postgresql":
                schema_editor.execute(sql, params=None)

        return apply

    return migrations.RunPython(run(forward_sql), run(backward_sql))


SQL_DIRECTORY = "sql"


def sql_text(app_label: str, name: str) -> str:
    """The text of ``<app>/sql/<name>``: SQL that matters (functions, triggers) is kept in files
    of its own, one per version, and migrations load it from there by name."""
    return (Path(__file__).resolve().parents[1] / app_label / SQL_DIRECTORY / name).read_text()


def current_sql(app_label: str, name: str) -> str:
    """The current version of ``<app>/sql/<name>.<NNNN>.sql``: the highest number, the version
    the latest migration installed."""
    versions = sorted(
        (Path(__file__).resolve().parents[1] / app_label / SQL_DIRECTORY).glob(
            f"{name}.[0-9][0-9][0-9][0-9].sql"
        )
    )
    return versions[-1].read_text()


def postgresql_sql_files(app_label: str, forward: str, backward: str) -> Any:
    """``postgresql_only`` with the texts of two files of ``<app>/sql/``: the version this
    migration installs, and the one it goes back to (or the file that drops it)."""
    return postgresql_only(sql_text(app_label, forward), sql_text(app_label, backward))


def statements(text: str) -> list[str]:
    """The statements of an SQLite script, one by one (SQLite runs one per call): split where
    SQLite itself says a statement is complete, so a trigger's body stays whole."""
    found, pending = [], ""
    for line in text.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            found.append(pending.strip())
            pending = ""
    assert not pending.strip() or pending.lstrip().startswith("--"), pending
    return [statement for statement in found if statement]


def sql_files(
    app_label: str,
    *,
    postgresql: tuple[str, str | None],
    sqlite: tuple[str, str | None],
) -> Any:
    """A migration operation that runs, on each database, its own file of ``<app>/sql/``: the
    first of a pair forwards, the second backwards (None: nothing to undo, such as a backfill
    of a column that going back drops). The two texts sit side by side where the databases
    need different SQL for one rule."""

    def run(index: int) -> Any:
        def apply(apps: Any, schema_editor: Any) -> None:
            postgresql_name, sqlite_name = postgresql[index], sqlite[index]
            if schema_editor.connection.vendor == "postgresql":
                texts = [sql_text(app_label, postgresql_name)] if postgresql_name else []
            else:
                texts = statements(sql_text(app_label, sqlite_name)) if sqlite_name else []
            for sql in texts:
                schema_editor.execute(sql, params=None)

        return apply

    return migrations.RunPython(run(0), run(1))


def rows_kept_whole(table: str) -> Any:
    """A migration operation: ``table`` keeps a row whole and uncompressed up to a page
    (``toast_tuple_target``, PostgreSQL only). For tables whose rows hold a rendering of about
    2 KB, just past where PostgreSQL compresses a row's large values by default: every write
    paid a compression, every read a decompression, to save about 1 KB. A row larger than a
    page is still compressed until it fits one."""
    return postgresql_only(
        f"ALTER TABLE {table} SET (toast_tuple_target = 8160)",
        f"ALTER TABLE {table} RESET (toast_tuple_target)",
    )


def drop_field_index(app_label: str, model_name: str, field_name: str) -> Any:
    """A migration operation that drops the one-column index Django made for a field (whatever
    table name it was made under), and nothing else: an index the model declares on the same
    column stays, and so does the field's foreign key constraint. Backwards, the index comes
    back."""

    def found(apps: Any, schema_editor: Any) -> tuple[Any, Any, list[str]]:
        model = apps.get_model(app_label, model_name)
        field = model._meta.get_field(field_name)
        declared = {index.name for index in model._meta.indexes}
        connection = schema_editor.connection
        with connection.cursor() as cursor:
            constraints = connection.introspection.get_constraints(cursor, model._meta.db_table)
        names = [
            name
            for name, c in constraints.items()
            if c["columns"] == [field.column]
            and c["index"]
            and not (c["unique"] or c["primary_key"] or c["foreign_key"])
            and name not in declared
        ]
        return model, field, names

    def drop(apps: Any, schema_editor: Any) -> None:
        model, _, names = found(apps, schema_editor)
        for name in names:
            schema_editor.remove_index(model, models.Index(fields=[field_name], name=name))

    def restore(apps: Any, schema_editor: Any) -> None:
        model, field, names = found(apps, schema_editor)
        if not names:
            digest = hashlib.sha256(f"{model._meta.db_table}.{field.column}".encode()).hexdigest()
            name = f"{model._meta.db_table[:40]}_{field.column[:10]}_{digest[:8]}"
            schema_editor.add_index(model, models.Index(fields=[field_name], name=name))

    return migrations.RunPython(drop, restore)


def unindexed(app_label: str, alter: Any) -> Any:
    """``alter`` (a migration's ``AlterField`` to ``db_index=False``) as what it means in the
    database: the field's own index dropped (``drop_field_index``). Django's own ``AlterField``
    would also drop and re-add a foreign key constraint (re-checking every row under a lock)
    and, on SQLite, copy the table."""
    return migrations.SeparateDatabaseAndState(
        state_operations=[alter],
        database_operations=[drop_field_index(app_label, alter.model_name, alter.name)],
    )
