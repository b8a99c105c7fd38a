"""The admin app with the ledger's own site (``ledgerproject.admin_site``) as its default."""

from django.contrib.admin.apps import AdminConfig


class LedgerAdminConfig(AdminConfig):
    default_site = "ledgerproject.admin_site.LedgerAdminSite"
