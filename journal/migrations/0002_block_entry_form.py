"""Each block records the form its entries were hashed in (journal.merkle.entry_of)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('journal', '0001_initial'),
    ]

    operations = [
        migrations.AddField(
            model_name='block',
            name='entry_form',
            field=models.PositiveSmallIntegerField(default=1),
        ),
    ]
