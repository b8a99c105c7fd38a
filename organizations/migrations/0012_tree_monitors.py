"""Balance monitors on account trees: a monitor may watch an account's rolled-up balance in one
asset, and keeps what it last saw of it. Nullable columns, so that SQLite adds them in place.
Every monitor names the asset it watches: an account monitor, its account's."""

from django.db import migrations, models


def name_assets(apps, schema_editor):
    monitor_model = apps.get_model("organizations", "BalanceMonitor")
    account_model = apps.get_model("organizations", "Account")
    unnamed = monitor_model.objects.filter(asset_code__isnull=True)
    for organization_id, pk, account_id in list(
        unnamed.values_list("organization_id", "pk", "account_id")
    ):
        asset_code = account_model.objects.values_list("asset_code", flat=True).get(
            organization_id=organization_id, pk=account_id
        )
        monitor_model.objects.filter(organization_id=organization_id, pk=pk).update(
            asset_code=asset_code
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
