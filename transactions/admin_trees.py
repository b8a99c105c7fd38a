"""The ledger's chart of accounts in the admin (``.../chart-of-accounts/``): the account tree,
each account indented under its parent with its rolled-up balance per asset (its own plus all
its descendants', ``transactions.rollups``, the API's reads), now or at the end of a day in the
ledger's time zone. Needs the view permissions on the ledger and on accounts."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from django import forms
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone

from ledgerproject.amounts import format_balance
from organizations import periods
from organizations.admin_tools import admin_url
from organizations.models import Account
from transactions import rollups
from transactions.admin_views import ledger_of_page, page_context

# A page shows at most this many accounts (roots first, each followed by its subtree).
SHOWN = 2_000


class ChartForm(forms.Form):
    at = forms.DateField(
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}),
        help_text="Effective at the end of this day (now if empty).",
    )


@dataclass
class Line:
    account: dict[str, Any]
    depth: int
    url: str
    balances: list[str]


def _in_tree_order(accounts: list[dict[str, Any]]) -> list[tuple[dict[str, Any], int]]:
    """Each root by alias, then the accounts under it, depth first, children by alias."""
    children: dict[uuid.UUID | None, list[dict[str, Any]]] = {}
    known = {row["id"] for row in accounts}
    for row in sorted(accounts, key=lambda row: row["alias"]):
        parent = row["parent_account_id"] if row["parent_account_id"] in known else None
        children.setdefault(parent, []).append(row)
    ordered: list[tuple[dict[str, Any], int]] = []
    stack = [(row, 0) for row in reversed(children.get(None, []))]
    while stack and len(ordered) < SHOWN:
        row, depth = stack.pop()
        ordered.append((row, depth))
        stack.extend((child, depth + 1) for child in reversed(children.get(row["id"], [])))
    return ordered


def chart_of_accounts(request: HttpRequest, object_id: str, *, model_admin: Any) -> HttpResponse:
    ledger = ledger_of_page(request, object_id, model_admin, "organizations.view_account")
    form = ChartForm(request.GET or None)
    at = None
    if form.is_bound and form.is_valid() and form.cleaned_data.get("at"):
        at = periods.day_end(form.cleaned_data["at"], ledger.time_zone)
    accounts = [
        dict(row)
        for row in Account.objects.filter(
            organization_id=ledger.organization_id, ledger_id=ledger.pk, deleted_at__isnull=True
        )
        .exclude(type=Account.EXTERNAL)
        .values("id", "alias", "name", "asset_code", "parent_account_id")
    ]
    ordered = _in_tree_order(accounts)
    now = timezone.now()
    ids = [row["id"] for row, _ in ordered]
    totals = rollups.rolled_up(ledger, ids, at=at or now, now=now)
    lines = [
        Line(
            account=row,
            depth=depth,
            url=admin_url(Account, "change", row["id"]),
            balances=[
                format_balance(value["available"], value["onHold"], value["scale"], asset)
                for asset, value in totals.get(row["id"], {}).items()
            ],
        )
        for row, depth in ordered
    ]
    context = {
        **page_context(request, model_admin, ledger, "Chart of accounts"),
        "form": form,
        "lines": lines,
        "at": at,
        "cut": len(accounts) > len(lines),
        "shown": len(lines),
        "total": len(accounts),
    }
    return TemplateResponse(request, "admin/organizations/ledger/chart_of_accounts.html", context)
