"""Composite keys on the tenant tables: ``(organization_id, id)`` primary keys and
``(organization_id, <x>_id)`` foreign keys between tenant tables (``ledgerproject.tenancy``).
A database created by the project's backends has them already; one created before is converted
in place, rows kept."""

from django.db import migrations

from ledgerproject.tenancy import TenantKeys


class Migration(migrations.Migration):
    dependencies = [
        ("organizations", "0004_authepoch"),
        ("instruments", "0001_initial"),
        ("templates_dsl", "0001_initial"),
        ("transactions", "0006_transaction_expires_at"),
    ]

    operations = [TenantKeys()]
