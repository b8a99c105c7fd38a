"""Who made each change, in which request, from where (``ledgerproject.actors``)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('outbox', '0004_event_resource_index'),
    ]

    operations = [
        migrations.AddField(
            model_name='event',
            name='actor_id',
            field=models.CharField(blank=True, max_length=64, null=True),
        ),
        migrations.AddField(
            model_name='event',
            name='actor_kind',
            field=models.CharField(choices=[('token', 'token'), ('staff', 'staff'), ('command', 'command'), ('system', 'system')], db_default='system', default='system', max_length=16),
        ),
        migrations.AddField(
            model_name='event',
            name='actor_name',
            field=models.CharField(db_default='', default='', max_length=256),
        ),
        migrations.AddField(
            model_name='event',
            name='client_address',
            field=models.GenericIPAddressField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='event',
            name='request_id',
            field=models.CharField(blank=True, db_default='', default='', max_length=128),
        ),
    ]
