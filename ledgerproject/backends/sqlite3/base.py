"""Django's SQLite backend, whose schema editor writes the tenant keys (foreign keys inline,
as SQLite needs them in ``CREATE TABLE``)."""

import functools
import sqlite3
import uuid
from typing import Any

from django.db.backends.sqlite3 import base, schema

from ledgerproject.tenancy import TenantKeysSchemaMixin, triggers_set_aside

# A literal statement (``rows.Select``) sends its ids as ``uuid.UUID``: as Django stores a
# UUIDField on SQLite, 32 hex digits (the ORM converts them itself before sending). The adapter
# is the sqlite3 module's, so it holds for every SQLite connection of the process.
sqlite3.register_adapter(uuid.UUID, lambda value: value.hex)


class DatabaseSchemaEditor(TenantKeysSchemaMixin, schema.DatabaseSchemaEditor):
    composite_fks_inline = True


def _keeping_triggers(method: Any) -> Any:
    @functools.wraps(method)
    def change(self: Any, *args: Any, **kwargs: Any) -> Any:
        with triggers_set_aside(self):
            return method(self, *args, **kwargs)

    return change


# The changes SQLite makes by copying a table into a new one: the database's triggers are set
# aside for each and made again after it (``tenancy.triggers_set_aside``).
for _name in (
    "add_field",
    "remove_field",
    "alter_field",
    "add_constraint",
    "remove_constraint",
    "alter_unique_together",
):
    setattr(DatabaseSchemaEditor, _name, _keeping_triggers(getattr(DatabaseSchemaEditor, _name)))


class DatabaseWrapper(base.DatabaseWrapper):
    SchemaEditorClass = DatabaseSchemaEditor
