"""An account's status comes from a closed list (``organizations.models.ACCOUNT_STATUSES``),
each with its effect on postings: the choices the admin offers, and a check constraint so that
no writer (a queryset update, plain SQL) can store another code. No data migration: before this
change only the API's free-text status could store another code, and no stored ledger outside
the tests holds one; on a database that does, this migration stops at the constraint, and those
accounts must first be given a listed code (docs/API.md, Account statuses)."""

from django.db import migrations, models

CODES = ["ACTIVE", "001", "003", "FROZEN", "BLOCKED", "002", "INACTIVE"]


class Migration(migrations.Migration):
    dependencies = [
        ("organizations", "0006_redundant_indexes"),
    ]

    operations = [
        migrations.AlterField(
            model_name="account",
            name="status_code",
            field=models.CharField(
                choices=[
                    ("ACTIVE", "ACTIVE: sends and receives"),
                    ("001", "001 (Active): sends and receives"),
                    ("003", "003 (Pre-launch): receives only"),
                    ("FROZEN", "FROZEN: neither sends nor receives"),
                    ("BLOCKED", "BLOCKED: neither sends nor receives"),
                    ("002", "002 (Blocked): neither sends nor receives"),
                    ("INACTIVE", "INACTIVE: neither sends nor receives"),
                ],
                default="ACTIVE",
                max_length=100,
            ),
        ),
        migrations.AddConstraint(
            model_name="account",
            constraint=models.CheckConstraint(
                condition=models.Q(status_code__in=CODES), name="account_status_known"
            ),
        ),
    ]
