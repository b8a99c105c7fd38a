"""Django's PostgreSQL backend, whose schema editor writes the tenant keys."""

from django.db.backends.postgresql import base, schema

from ledgerproject.tenancy import TenantKeysSchemaMixin


class DatabaseSchemaEditor(TenantKeysSchemaMixin, schema.DatabaseSchemaEditor):
    pass


class DatabaseWrapper(base.DatabaseWrapper):
    SchemaEditorClass = DatabaseSchemaEditor
