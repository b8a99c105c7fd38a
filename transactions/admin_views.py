"""Admin pages of one ledger, served under the ledger's admin URL (``LedgerAdmin.get_urls``),
and what they share (``ledger_of_page``, ``page_context``): here ``.../dashboard/``, SVG charts
drawn on the server (SENT transactions per day, transactions by status, amount by asset: the
API's three chart types), the latest transactions, balances, and a button that runs
``ledger_check`` and shows its report. It needs the view permissions on the ledger and on
transactions. The posting page is ``admin_posting``.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.db.models import Count
from django.db.models.functions import TruncDate
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone

from ledgerproject.amounts import format_amount
from organizations.admin import admin_url
from organizations.models import Account, Balance, Ledger
from templates_dsl.models import TransactionTemplate
from transactions import selectors
from transactions.charts_svg import Bar, horizontal_bars, vertical_bars
from transactions.integrity import ledger_check
from transactions.models import Transaction

WINDOWS = (7, 30, 90)
STATUS_COLORS = {
    Transaction.CREATED: "#999999",
    Transaction.PRE_APPROVED: "#e0a458",
    Transaction.SENT: "#5b8c5a",
    Transaction.CANCELED: "#c2574b",
}


def ledger_of_page(request: HttpRequest, object_id: str, model_admin: Any, *perms: str) -> Ledger:
    ledger = model_admin.get_object(request, unquote(object_id))
    if ledger is None:
        raise Http404("No such ledger.")
    if not model_admin.has_view_permission(request, ledger):
        raise PermissionDenied
    if not all(request.user.has_perm(perm) for perm in perms):
        raise PermissionDenied
    return ledger


def page_context(request: HttpRequest, model_admin: Any, ledger: Ledger, title: str) -> dict:
    return {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.opts,
        "original": ledger,
        "ledger": ledger,
        "title": title,
        "subtitle": f"{ledger.name} · {ledger.organization}",
        "links": {
            "ledger": admin_url(Ledger, "change", ledger.pk),
            "dashboard": admin_url(Ledger, "dashboard", ledger.pk),
            "post": admin_url(Ledger, "post", ledger.pk),
            "reports": admin_url(Ledger, "reports", ledger.pk),
            "journal": admin_url(Ledger, "journal", ledger.pk),
            "chart_of_accounts": admin_url(Ledger, "chart_of_accounts", ledger.pk),
            "accounts": admin_url(Account, ledger=ledger.pk),
            "templates": admin_url(TransactionTemplate, ledger=ledger.pk),
            "transactions": admin_url(Transaction, ledger=ledger.pk),
            "balances": admin_url(Balance, ledger=ledger.pk),
            "audit": admin_url("outbox.event", ledger_id=ledger.pk),
        },
    }


# ---------------------------------------------------------------------------------------------
# Dashboard


def _per_day(ledger: Ledger, start: dt.date, end: dt.date) -> list[Bar]:
    begin = dt.datetime.combine(start, dt.time.min, tzinfo=dt.UTC)
    rows = (
        Transaction.objects.filter(
            organization_id=ledger.organization_id,
            ledger_id=ledger.pk,
            status=Transaction.SENT,
            created_at__gte=begin,
        )
        .annotate(day=TruncDate("created_at", tzinfo=dt.UTC))
        .values_list("day")
        .annotate(n=Count("id"))
        .order_by()
    )
    counts = {day: n for day, n in rows}
    days = [start + dt.timedelta(days=i) for i in range((end - start).days + 1)]
    return [Bar(day.isoformat(), counts.get(day, 0), str(counts.get(day, 0))) for day in days]


def _charts(ledger: Ledger, days: int) -> dict[str, Any]:
    end = timezone.now().astimezone(dt.UTC).date()
    start = end - dt.timedelta(days=days - 1)
    per_day = _per_day(ledger, start, end)
    by_status = selectors.chart_compute(
        ledger=ledger,
        chart_type="transactionsByStatus",
        start=start.isoformat(),
        end=end.isoformat(),
    )["data"]
    by_asset = selectors.chart_compute(ledger=ledger, chart_type="totalAmountByAsset", limit=10)[
        "data"
    ]
    overdrawn = selectors.chart_compute(ledger=ledger, chart_type="overdraftByAsset", limit=10)[
        "data"
    ]
    return {
        "per_day": vertical_bars(
            per_day, title="SENT transactions per day", tick=lambda label: label[5:]
        ),
        "per_day_total": sum(int(bar.value) for bar in per_day),
        "by_status": horizontal_bars(
            [
                Bar(
                    item["metric"], item["count"], str(item["count"]), STATUS_COLORS[item["metric"]]
                )
                for item in by_status
            ],
            title="Transactions by status",
        ),
        "by_asset": _asset_bars(by_asset, "Amount by asset"),
        "overdraft_by_asset": _asset_bars(overdrawn, "Overdrafts by asset"),
        "start": start,
        "end": end,
    }


def _asset_bars(items: list[dict[str, Any]], title: str) -> Any:
    return horizontal_bars(
        [
            Bar(
                item["metric"],
                item["count"] / 10 ** item["scale"],
                f"{format_amount(item['count'], item['scale'])} {item['metric']}",
            )
            for item in items
        ],
        title=title,
    )


def ledger_dashboard(request: HttpRequest, object_id: str, *, model_admin: Any) -> HttpResponse:
    ledger = ledger_of_page(request, object_id, model_admin, "transactions.view_transaction")
    try:
        days = int(request.GET.get("days", 30))
    except ValueError:
        days = 30
    days = days if days in WINDOWS else 30
    report = ledger_check(ledger) if request.method == "POST" and "check" in request.POST else None
    latest = Transaction.objects.filter(
        organization_id=ledger.organization_id, ledger_id=ledger.pk
    ).order_by("-created_at", "-id")[:10]
    balances = (
        Balance.objects.filter(
            organization_id=ledger.organization_id,
            ledger_id=ledger.pk,
            is_external=False,
            account__deleted_at__isnull=True,
        )
        .select_related("account")
        .order_by("account__alias")[:25]
    )
    context = {
        **page_context(request, model_admin, ledger, "Ledger dashboard"),
        **_charts(ledger, days),
        "days": days,
        "windows": WINDOWS,
        "latest": [
            {
                "url": admin_url(Transaction, "change", tx.pk),
                "tx": tx,
                "amount": format_amount(tx.amount, tx.scale, tx.asset_code),
            }
            for tx in latest
        ],
        "balances": [
            {
                "alias": b.account.alias,
                "url": admin_url(Account, "change", b.account_id),
                "asset": b.asset_code,
                "available": format_amount(b.available, b.scale, b.asset_code),
                "on_hold": format_amount(b.on_hold, b.scale, b.asset_code),
            }
            for b in balances
        ],
        "report": report,
        "can_post": request.user.has_perm("transactions.add_transaction"),
    }
    return TemplateResponse(request, "admin/organizations/ledger/dashboard.html", context)
