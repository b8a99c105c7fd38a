"""Balance monitors on account trees: a monitor may watch an account's rolled-up balance in one
asset, and keeps what it last saw of it. Nullable columns, so that SQLite adds them in place.
Every monitor names the asset it watches: an account monitor, its account's."""

from django.db import migrations, models


def name_assets(apps, schema_editor):
    monitor_model = apps.get_model("organizations", "BalanceMonitor")
    account_model = apps.get_model("organizations", "Account")
    for monitor in monitor_model.objects.filter(asset_code__isnull=True).iterator():
        account = account_model.objects.get(
            organization_id=monitor.organization_id, pk=monitor.account_id
        )
        monitor_model.objects.filter(organization_id=monitor.organization_id, pk=monitor.pk).update(
            asset_code=account.asset_code
        )


class Migration(migrations.Migration):
    dependencies = [
        ("organizations", "0011_balance_monitors"),
    ]

    operations = [
        migrations.AddField(
            model_name="balancemonitor",
            name="tree",
            field=models.BooleanField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="balancemonitor",
            name="asset_code",
            field=models.CharField(blank=True, max_length=100, null=True),
        ),
        migrations.AddField(
            model_name="balancemonitor",
            name="seen",
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.RunPython(name_assets, migrations.RunPython.noop),
    ]
