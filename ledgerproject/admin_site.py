"""The back office's admin site: its titles, and an index that leads to each ledger's dashboard
in one click (the latest active ledgers first, at most ``INDEX_LEDGERS``; the ledger list has
them all)."""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.contrib import admin
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.urls import reverse

INDEX_LEDGERS = 20


class LedgerAdminSite(admin.AdminSite):
    site_header = "Ledger back office"
    site_title = "Ledger back office"
    index_title = "Ledger back office"
    index_template = "admin/ledger_index.html"

    def index(self, request: HttpRequest, extra_context: Any = None) -> TemplateResponse:
        ledger_model = apps.get_model("organizations", "Ledger")
        rows = []
        if request.user.has_perm("organizations.view_ledger") and request.user.has_perm(
            "transactions.view_transaction"
        ):
            ledgers = (
                ledger_model.objects.filter(deleted_at__isnull=True)
                .select_related("organization")
                .order_by("-created_at", "-id")[:INDEX_LEDGERS]
            )
            rows = [
                {
                    "ledger": ledger,
                    "dashboard": reverse("admin:organizations_ledger_dashboard", args=[ledger.pk]),
                    "post": reverse("admin:organizations_ledger_post", args=[ledger.pk]),
                }
                for ledger in ledgers
            ]
        context = {
            "ledger_dashboards": rows,
            "ledgers_url": reverse("admin:organizations_ledger_changelist"),
            **(extra_context or {}),
        }
        return super().index(request, context)
