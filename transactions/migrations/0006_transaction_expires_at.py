"""A pending transaction may carry an expiry; the partial index serves the expire_holds worker."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('transactions', '0005_idempotency_answers_balance_moved'),
    ]

    operations = [
        migrations.AddField(
            model_name='transaction',
            name='expires_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddIndex(
            model_name='transaction',
            index=models.Index(condition=models.Q(('expires_at__isnull', False), ('status', 'PRE_APPROVED')), fields=['expires_at'], name='tx_pending_expiry_idx'),
        ),
    ]
