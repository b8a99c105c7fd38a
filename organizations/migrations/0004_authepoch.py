"""The authentication epoch (``AuthEpoch``): one row, and on PostgreSQL the triggers that move
it on every change to API tokens, their organizations and organizations (statement-level, so
a move that rewrites a thousand paths moves it once). The value comes from a sequence: it
changes with every statement, even twice in one transaction, and is never given twice, even
after a rollback."""

from django.db import migrations, models

from ledgerproject.db import postgresql_only

CREATE = """
CREATE SEQUENCE IF NOT EXISTS organizations_authepoch_seq;
CREATE OR REPLACE FUNCTION organizations_auth_epoch_bump() RETURNS trigger AS $$
BEGIN
    INSERT INTO organizations_authepoch (id, value)
    VALUES (1, nextval('organizations_authepoch_seq'))
    ON CONFLICT (id) DO UPDATE SET value = EXCLUDED.value;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER auth_epoch_bump AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE
    ON organizations_apitoken
    FOR EACH STATEMENT EXECUTE FUNCTION organizations_auth_epoch_bump();
CREATE TRIGGER auth_epoch_bump AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE
    ON organizations_apitoken_organizations
    FOR EACH STATEMENT EXECUTE FUNCTION organizations_auth_epoch_bump();
CREATE TRIGGER auth_epoch_bump AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE
    ON organizations_organization
    FOR EACH STATEMENT EXECUTE FUNCTION organizations_auth_epoch_bump();
"""
DROP = """
DROP TRIGGER IF EXISTS auth_epoch_bump ON organizations_apitoken;
DROP TRIGGER IF EXISTS auth_epoch_bump ON organizations_apitoken_organizations;
DROP TRIGGER IF EXISTS auth_epoch_bump ON organizations_organization;
DROP FUNCTION IF EXISTS organizations_auth_epoch_bump();
DROP SEQUENCE IF EXISTS organizations_authepoch_seq;
"""


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
        postgresql_only(CREATE, DROP),
    ]
