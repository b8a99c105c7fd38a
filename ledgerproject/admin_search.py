"""The back office's one search box: a query, searched in each of the lists it covers with
that list's own search (its ``ModelAdmin.get_search_results``: the fields it names, the
transaction list's ``@alias`` and ``key=value``), among the rows the user may view.

Each list answers at most ``PER_LIST`` rows and links to itself with the same query for the
rest; a query is at most ``MAX_QUERY`` characters."""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.contrib import admin
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.http import urlencode

# The lists searched, in the order the page shows them.
SEARCHED = (
    "organizations.account",
    "transactions.transaction",
    "organizations.ledger",
    "organizations.organization",
)
PER_LIST = 10
MAX_QUERY = 200


def search(request: HttpRequest, site: admin.AdminSite) -> TemplateResponse:
    query = request.GET.get("q", "").strip()[:MAX_QUERY]
    sections = []
    for label in SEARCHED if query else ():
        model_admin = site.get_model_admin(apps.get_model(label))
        if model_admin.has_view_permission(request):
            sections.append(_section(request, model_admin, query))
    context = {
        **site.each_context(request),
        "title": f"Search: {query}" if query else "Search",
        "global_query": query,
        "sections": sections,
        "per_list": PER_LIST,
    }
    return TemplateResponse(request, "admin/search.html", context)


def _section(request: HttpRequest, model_admin: Any, query: str) -> dict[str, Any]:
    """One list's first rows for ``query``, found by the list's own search."""
    rows, duplicates = model_admin.get_search_results(
        request, model_admin.get_queryset(request), query
    )
    if duplicates:
        rows = rows.distinct()
    ordering = model_admin.get_ordering(request) or ("-pk",)
    found = list(rows.order_by(*ordering)[: PER_LIST + 1])
    opts = model_admin.opts
    page = f"admin:{opts.app_label}_{opts.model_name}"
    return {
        "title": model_admin.title_of_list(),
        "rows": [(str(row), reverse(f"{page}_change", args=[row.pk])) for row in found[:PER_LIST]],
        "more": len(found) > PER_LIST,
        "list": f"{reverse(f'{page}_changelist')}?{urlencode({'q': query})}",
    }
