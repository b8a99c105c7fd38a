"""The ledger's reports in the admin. ``.../reports/``: the trial balance at a day, or the
period report between two, in the ledger's time zone, as a table and as CSV
(``transactions.reports``, the same reports as the API's and ``manage.py ledger_report``).
``.../journal/``: the journal's latest blocks, and *Verify*, which runs ``check_ledger``'s two
journal checks (the chain of blocks and their entries; the books against their journal) on
one snapshot. Each needs the view permissions on the ledger and on transactions."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django import forms
from django.db.models import Count, Sum
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone

from journal.selectors import blocks
from ledgerproject.admin_csv import csv_response
from ledgerproject.errors import LedgerError
from organizations import periods
from transactions import integrity, reports
from transactions.admin_views import ledger_of_page, page_context


class ReportForm(forms.Form):
    kind = forms.ChoiceField(
        choices=[("trial", "Trial balance"), ("period", "Period report")], initial="trial"
    )
    at = forms.DateField(
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}),
        help_text="Trial balance: effective at the end of this day (today if empty).",
    )
    start = forms.DateField(
        label="From", required=False, widget=forms.DateInput(attrs={"type": "date"})
    )
    end = forms.DateField(
        label="To", required=False, widget=forms.DateInput(attrs={"type": "date"})
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("kind") == "period" and (data.get("start") is None or data.get("end") is None):
            raise forms.ValidationError("A period report needs its first and last day.")
        return data


def _day(ledger: Any, day: dt.date, *, end_of_day: bool) -> dt.datetime:
    return (periods.day_end if end_of_day else periods.day_start)(day, ledger.time_zone)


def ledger_reports(
    request: HttpRequest, object_id: str, *, model_admin: Any
) -> HttpResponse | StreamingHttpResponse:
    ledger = ledger_of_page(request, object_id, model_admin, "transactions.view_transaction")
    form = ReportForm(request.GET or None)
    context = {
        **page_context(request, model_admin, ledger, "Reports"),
        "form": form,
        "report": None,
    }
    if not form.is_bound or not form.is_valid():
        return TemplateResponse(request, "admin/organizations/ledger/reports.html", context)
    data = form.cleaned_data
    if data["kind"] == "period":
        start = _day(ledger, data["start"], end_of_day=False)
        try:
            report = reports.period_report(
                ledger, start, _day(ledger, data["end"], end_of_day=True)
            )
        except LedgerError as exc:
            form.add_error(None, f"{exc.error.code}: {exc.description}")
            return TemplateResponse(request, "admin/organizations/ledger/reports.html", context)
        name = f"period-report-{data['start']}-{data['end']}"
    else:
        at = _day(ledger, data["at"], end_of_day=True) if data.get("at") else timezone.now()
        report = reports.trial_balance(ledger, at)
        name = f"trial-balance-{(data.get('at') or timezone.now().date())}"
    rows = reports.csv_rows(report)
    if request.GET.get("format") == "csv":
        return csv_response(rows, f"{name}.csv")
    context.update(report=report, header=rows[0], rows=rows[1:], csv_query=_with_csv(request))
    return TemplateResponse(request, "admin/organizations/ledger/reports.html", context)


def _with_csv(request: HttpRequest) -> str:
    query = request.GET.copy()
    query["format"] = "csv"
    return query.urlencode()


# The blocks the journal page lists, newest first.
JOURNAL_BLOCKS = 20
JOURNAL_CHECKS = (integrity.JOURNAL_CHAIN, integrity.BOOKS_AGAINST_JOURNAL)


def ledger_journal(request: HttpRequest, object_id: str, *, model_admin: Any) -> HttpResponse:
    ledger = ledger_of_page(request, object_id, model_admin, "transactions.view_transaction")
    chain = blocks(ledger.organization_id, ledger.pk)
    report = None
    if request.method == "POST" and "verify" in request.POST:
        others = [name for name, _ in integrity.CHECKS if name not in JOURNAL_CHECKS]
        report = integrity.ledger_check(ledger, without=others)
    context = {
        **page_context(request, model_admin, ledger, "Journal"),
        "latest": list(chain.order_by("-height")[:JOURNAL_BLOCKS]),
        "totals": chain.aggregate(blocks=Count("id"), entries=Sum("entry_count")),
        "report": report,
    }
    return TemplateResponse(request, "admin/organizations/ledger/journal.html", context)
