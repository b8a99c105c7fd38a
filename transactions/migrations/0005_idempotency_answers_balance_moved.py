"""Idempotency keys keep what their answer is rendered from (the answer itself is recorded
right after COMMIT); Balance leaves this app's state (organizations/migrations/0002 took it)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('transactions', '0004_amounts_38_digits'),
        ('organizations', '0002_balance'),
    ]

    operations = [
        migrations.AddField(
            model_name='idempotencykey',
            name='outcome',
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name='idempotencykey',
            name='response_body',
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name='Balance')],
        ),
    ]
