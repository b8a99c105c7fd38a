"""The back office's admin site: its titles, and an index that leads to each ledger's dashboard
in one click (the latest active ledgers first, at most ``INDEX_LEDGERS``; the ledger list has
them all)."""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.contrib import admin
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.urls import path, reverse

from ledgerproject.admin_base import LedgerModelAdmin
from ledgerproject.admin_search import search

INDEX_LEDGERS = 20
# The index and the sidebar group the lists by task, in this order, not by Django app. A list
# of an app not named here (a library's) keeps its app's section, after these.
TASKS = (
    (
        "Ledgers",
        "organizations.organization organizations.ledger instruments.instrument instruments.rate "
        "organizations.portfolio organizations.product templates_dsl.transactiontemplate",
    ),
    ("Accounts", "organizations.account organizations.balance organizations.balancemonitor"),
    (
        "Transactions",
        "transactions.transaction transactions.scheduledposting transactions.operation",
    ),
    ("Approvals", "transactions.approval transactions.approvalrule"),
    ("Reports", "outbox.event"),
    (
        "Developers",
        "organizations.apitoken outbox.webhooksubscription outbox.delivery "
        "transactions.idempotencykey",
    ),
    ("Staff", "auth.user auth.group"),
)


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

    def get_urls(self) -> list[Any]:
        found = path(
            "search/", self.admin_view(lambda request: search(request, self)), name="search"
        )
        return [found, *super().get_urls()]

    def register(self, model_or_iterable: Any, admin_class: Any = None, **options: Any) -> None:
        """Every list has the back office's shared base (``LedgerModelAdmin``), a library's
        too (Django's users and groups): its rules and its words hold on every page."""
        base = admin_class or admin.ModelAdmin
        if not issubclass(base, LedgerModelAdmin):
            admin_class = type(base.__name__, (base, LedgerModelAdmin), {})
        super().register(model_or_iterable, admin_class, **options)

    def get_app_list(self, request: HttpRequest, app_label: str | None = None) -> list[Any]:
        """The lists the user may see, grouped by task (``TASKS``) and named by their admins
        (``LedgerModelAdmin.list_title``); an app's own page (``app_label``) stays Django's."""
        found = super().get_app_list(request, app_label)
        if app_label is not None:
            return found
        lists = {
            entry["model"]._meta.label_lower: entry for app in found for entry in app["models"]
        }
        for entry in lists.values():
            model_admin = self.get_model_admin(entry["model"])
            assert isinstance(model_admin, LedgerModelAdmin)  # ``register`` sees to it
            entry["name"] = model_admin.title_of_list()
        grouped = []
        for task, labels in TASKS:
            entries = [lists.pop(label) for label in labels.split() if label in lists]
            if entries:
                slug = task.lower()
                grouped.append({"name": task, "app_label": slug, "app_url": entries[0]["admin_url"],
                                "has_module_perms": True, "models": entries})  # fmt: skip
        for app in found:
            rest = [entry for entry in app["models"] if entry["model"]._meta.label_lower in lists]
            if rest:
                grouped.append({**app, "models": rest})
        return grouped
