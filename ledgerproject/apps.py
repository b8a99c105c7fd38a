"""The admin app with the ledger's own site (``ledgerproject.admin_site``) as its default, and
the project's own system checks (``ledgerproject.checks``), registered once the apps are ready."""

from django.contrib.admin.apps import AdminConfig


class LedgerAdminConfig(AdminConfig):
    default_site = "ledgerproject.admin_site.LedgerAdminSite"

    def ready(self) -> None:
        super().ready()
        from ledgerproject import checks  # noqa: F401 - registers the checks
