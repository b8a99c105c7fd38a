"""Django's SQLite backend, whose schema editor writes the tenant keys (foreign keys inline,
as SQLite needs them in ``CREATE TABLE``)."""

import sqlite3
import uuid

from django.db.backends.sqlite3 import base, schema

from ledgerproject.tenancy import TenantKeysSchemaMixin

# A literal statement (``rows.Select``) sends its ids as ``uuid.UUID``: as Django stores a
# UUIDField on SQLite, 32 hex digits (the ORM converts them itself before sending). The adapter
# is the sqlite3 module's, so it holds for every SQLite connection of the process.
sqlite3.register_adapter(uuid.UUID, lambda value: value.hex)


class DatabaseSchemaEditor(TenantKeysSchemaMixin, schema.DatabaseSchemaEditor):
    composite_fks_inline = True


class DatabaseWrapper(base.DatabaseWrapper):
    SchemaEditorClass = DatabaseSchemaEditor
