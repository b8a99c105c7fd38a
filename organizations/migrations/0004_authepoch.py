"""The authentication epoch (``AuthEpoch``): one row, and on PostgreSQL the triggers that move
it on every change to API tokens, their organizations and organizations (statement-level, so
a move that rewrites a thousand paths moves it once). The value comes from a sequence: it
changes with every statement, even twice in one transaction, and is never given twice, even
after a rollback. The SQL: organizations/sql/."""

from django.db import migrations, models

from ledgerproject.migration_ops import postgresql_sql_files


def the_row(apps, schema_editor):
    apps.get_model("organizations", "AuthEpoch").objects.using(
        schema_editor.connection.alias
    ).get_or_create(id=1)


class Migration(migrations.Migration):
    dependencies = [("organizations", "0003_balance_overdraft_limit")]

    operations = [
        migrations.CreateModel(
            name="AuthEpoch",
            fields=[
                ("id", models.PositiveSmallIntegerField(default=1, primary_key=True, serialize=False)),
                ("value", models.BigIntegerField(default=0)),
            ],
            options={"verbose_name": "authentication epoch"},
        ),
        migrations.RunPython(the_row, migrations.RunPython.noop),
        postgresql_sql_files("organizations", "auth_epoch_bump.sql", "auth_epoch_bump.drop.sql"),
    ]
