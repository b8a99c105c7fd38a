"""The reason staff gave for a change in the back office (``ledgerproject.actors.reason``):
nullable, so that SQLite adds the column in place and existing events keep none."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("outbox", "0005_event_actor"),
    ]

    operations = [
        migrations.AddField(
            model_name="event",
            name="reason",
            field=models.CharField(blank=True, max_length=500, null=True),
        ),
    ]
