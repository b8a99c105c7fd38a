"""Django's SQLite backend, whose schema editor writes the tenant keys (foreign keys inline,
as SQLite needs them in ``CREATE TABLE``)."""

from django.db.backends.sqlite3 import base, schema

from ledgerproject.tenancy import TenantKeysSchemaMixin


class DatabaseSchemaEditor(TenantKeysSchemaMixin, schema.DatabaseSchemaEditor):
    composite_fks_inline = True


class DatabaseWrapper(base.DatabaseWrapper):
    SchemaEditorClass = DatabaseSchemaEditor
