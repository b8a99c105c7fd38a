"""Admin pages of one ledger, served under the ledger's admin URL (``LedgerAdmin.get_urls``):

- ``.../dashboard/``: SVG charts drawn on the server (SENT transactions per day, transactions by
  status, amount by asset: the API's three chart types), the latest transactions, balances, and
  a button that runs ``ledger_check`` and shows its report;
- ``.../post/``: pick a template, fill a form built from its variables, preview with a dry run,
  then post, through ``transaction_post`` like the API.

Both need the view permission on the ledger; the dashboard also needs ``view_transaction``,
posting ``add_transaction``.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.db.models import Count
from django.db.models.functions import TruncDate
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.utils import timezone
from django.utils.html import format_html

from ledgerproject import actors
from ledgerproject.amounts import format_amount, format_balance, parse_amount
from ledgerproject.errors import ErrorCode, LedgerError
from ledgerproject.metadata import validate_metadata
from organizations.admin import ReasonToAct, admin_url, reason_field
from organizations.models import Account, Balance, Ledger
from templates_dsl import ast
from templates_dsl.compile import compile_template
from templates_dsl.formatter import format_template
from templates_dsl.models import TransactionTemplate
from templates_dsl.selectors import templates_active
from transactions import approvals, engine, scheduling, selectors
from transactions.charts_svg import Bar, horizontal_bars, vertical_bars
from transactions.integrity import ledger_check
from transactions.models import Approval, ScheduledPosting, Transaction

WINDOWS = (7, 30, 90)
STATUS_COLORS = {
    Transaction.CREATED: "#999999",
    Transaction.PRE_APPROVED: "#e0a458",
    Transaction.SENT: "#5b8c5a",
    Transaction.CANCELED: "#c2574b",
}
MAX_ALIASES = 500


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


# ---------------------------------------------------------------------------------------------
# Posting


class AmountField(forms.CharField):
    """An amount as people write it (``25.00``), kept as the integer at the template's scale
    (``ledgerproject.amounts.parse_amount``, the inverse of the format shown everywhere)."""

    def __init__(self, *, asset: str, scale: int, **kwargs: Any) -> None:
        example = format_amount(2500 * 10**scale // 100, scale) if scale >= 2 else "25"
        kwargs.setdefault("help_text", f"{asset}, up to {scale} decimal(s), such as {example}.")
        super().__init__(max_length=60, **kwargs)
        self.asset, self.scale = asset, scale
        self.widget.attrs.update({"inputmode": "decimal", "placeholder": example})

    def clean(self, value: Any) -> Any:
        text = super().clean(value)
        if text in self.empty_values:
            return None
        try:
            return parse_amount(text, self.scale, self.asset)
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from exc


class PostingForm(ReasonToAct, forms.Form):
    """The variables of one template, then the optional overrides the API also takes."""

    def __init__(
        self,
        *args: Any,
        template: ast.Template,
        aliases: list[str],
        posting: bool = False,
        **kw: Any,
    ) -> None:
        super().__init__(*args, **kw)
        self.template, self.acting = template, posting
        for name in template.amount_variables():
            asset, scale = template.unit_of(name)
            self.fields[f"var_{name}"] = AmountField(label=f"${name}", asset=asset, scale=scale)
        for name in template.account_variables():
            self.fields[f"var_{name}"] = forms.CharField(
                label=f"${name}",
                max_length=101,
                help_text="An account alias, such as @alice.",
                widget=forms.TextInput(attrs={"list": "ledger-aliases", "autocomplete": "off"}),
            )
        self.fields["description"] = forms.CharField(
            required=False, max_length=2000, help_text="Leave empty for the template's."
        )
        self.fields["pending"] = forms.ChoiceField(
            choices=[
                ("", f"template default ({'yes' if template.pending else 'no'})"),
                ("true", "yes: hold the funds until commit"),
                ("false", "no: move the funds now"),
            ],
            required=False,
        )
        self.fields["metadata"] = forms.CharField(
            required=False,
            widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
            help_text="One key=value per line; merged over the template's metadata.",
        )
        self.fields["effective_at"] = forms.DateTimeField(
            label="Effective at",
            required=False,
            widget=forms.DateTimeInput(attrs={"type": "datetime-local"}),
            help_text="When the money moved (UTC), if earlier than now (a payment recorded "
            "late); leave empty for now.",
        )
        self.fields["scheduled_for"] = forms.DateTimeField(
            label="Post at",
            required=False,
            widget=forms.DateTimeInput(attrs={"type": "datetime-local"}),
            help_text="A future moment (UTC) to post it at instead of now: it is kept as a "
            "scheduled posting, and moves nothing until then. The preview shows it as if "
            "posted now.",
        )
        self.fields["commit_at"] = forms.DateTimeField(
            label="Commit at",
            required=False,
            widget=forms.DateTimeInput(attrs={"type": "datetime-local"}),
            help_text="A pending posting commits itself in full at this moment (UTC), unless "
            "committed or canceled before.",
        )
        self.fields["reason"] = reason_field(
            "Why, needed to post (not to preview).", required=False
        )
        self.aliases = aliases

    def clean_metadata(self) -> dict[str, str]:
        metadata = {}
        for number, line in enumerate(self.cleaned_data["metadata"].splitlines(), start=1):
            if not line.strip():
                continue
            key, sep, value = line.partition("=")
            if not sep or not key.strip():
                raise forms.ValidationError(f"Line {number}: expected key=value.")
            metadata[key.strip()] = value.strip()
        try:
            return validate_metadata(metadata)
        except LedgerError as exc:
            raise forms.ValidationError(f"{exc.error.code}: {exc.description}") from exc

    def posting_arguments(self) -> dict[str, Any]:
        data = self.cleaned_data
        pending = {"": None, "true": True, "false": False}[data.get("pending") or ""]
        return {
            "variables": {
                name[4:]: value for name, value in data.items() if name.startswith("var_")
            },
            "description": data.get("description") or None,
            "pending": pending,
            "metadata": data.get("metadata") or None,
            "effective_at": data.get("effective_at"),
            "commit_at": data.get("commit_at"),
        }

    # The API's names of the fields that have one here, for its errors' ``fields``.
    API_NAMES = {
        "effectiveAt": "effective_at",
        "scheduledFor": "scheduled_for",
        "commitAt": "commit_at",
    }

    def add_api_error(self, exc: LedgerError) -> None:
        placed = False
        for key in exc.fields or {}:
            name = self.API_NAMES.get(key) or f"var_{key.removeprefix('variables.').lstrip('$')}"
            if name in self.fields:
                self.add_error(name, f"{exc.error.code}: {exc.description}")
                placed = True
        if not placed:
            self.add_error(None, f"{exc.error.code}: {exc.description}")


def preview_rows(tx: Transaction) -> list[dict[str, str]]:
    return [
        {
            "account": op.account_alias,
            "type": op.type,
            "effect": op.effect,
            "amount": format_amount(op.amount, op.scale, op.asset_code),
            "before": format_balance(
                op.balance_available, op.balance_on_hold, op.balance_scale, op.asset_code
            ),
            "after": format_balance(
                op.balance_available_after,
                op.balance_on_hold_after,
                op.balance_scale_after,
                op.asset_code,
            ),
        }
        for op in tx.operation_rows()
    ]


def ledger_post(request: HttpRequest, object_id: str, *, model_admin: Any) -> HttpResponse:
    ledger = ledger_of_page(request, object_id, model_admin, "transactions.add_transaction")
    templates = list(templates_active(ledger).order_by("code"))
    code = request.POST.get("template") or request.GET.get("template") or ""
    chosen = next((t for t in templates if t.code == code), None)
    context = page_context(request, model_admin, ledger, "Post a transaction")
    context.update(templates=templates, chosen=chosen, form=None, preview=None)
    if code and chosen is None:
        messages.error(request, f"No active template with code '{code}' in this ledger.")
    if chosen is None:
        return TemplateResponse(request, "admin/organizations/ledger/post.html", context)

    compiled = compile_template(chosen.text)
    aliases = list(
        Account.objects.filter(
            ledger_id=ledger.pk,
            asset_code__in=[compiled.send.asset, compiled.delivered()[0]],
            deleted_at__isnull=True,
        )
        .order_by("alias")
        .values_list("alias", flat=True)[:MAX_ALIASES]
    )
    dry_run = "_post" not in request.POST
    form = PostingForm(
        request.POST if request.method == "POST" else None,
        template=compiled,
        aliases=aliases,
        posting=not dry_run,
    )
    context.update(form=form, canonical=format_template(compiled))
    if request.method == "POST" and form.is_valid():
        scheduled_for = form.cleaned_data.get("scheduled_for")
        reason = form.cleaned_data["reason"]
        try:
            request_ = engine.PostingRequest(template_code=chosen.code, **form.posting_arguments())
            if dry_run:
                tx = engine.post(ledger, request_, dry_run=True).transaction
            else:
                proposed = approvals.preview_if_approval_needed(ledger, request_)
                if proposed is not None and scheduled_for is not None:
                    raise LedgerError(
                        ErrorCode.ACTION_NOT_PERMITTED,
                        "This posting needs approval: post it now to propose it; a posting "
                        "that needs approval cannot be scheduled.",
                    )
                if proposed is not None:
                    return _proposed(request, ledger, request_, proposed, reason)
                with actors.reason(reason):
                    if scheduled_for is not None:
                        return _scheduled(request, ledger, request_, scheduled_for)
                    tx = engine.post(ledger, request_).transaction
            assert tx is not None
        except LedgerError as exc:
            form.add_api_error(exc)
        else:
            if dry_run:
                context["preview"] = {
                    "tx": tx,
                    "amount": format_amount(tx.amount, tx.scale, tx.asset_code),
                    "rows": preview_rows(tx),
                }
            else:
                url = admin_url(Transaction, "change", tx.pk)
                messages.success(
                    request,
                    format_html(
                        'Posted <a href="{}">{}</a>: {} ({}).',
                        url,
                        tx.pk,
                        format_amount(tx.amount, tx.scale, tx.asset_code),
                        tx.status,
                    ),
                )
                if request.user.has_perm("transactions.view_transaction"):
                    return HttpResponseRedirect(url)
                return HttpResponseRedirect(f"{context['links']['post']}?template={chosen.code}")
    return TemplateResponse(request, "admin/organizations/ledger/post.html", context)


def _proposed(
    request: HttpRequest,
    ledger: Ledger,
    posting: engine.PostingRequest,
    preview: Transaction,
    reason: str,
) -> HttpResponse:
    """Keep the posting as a proposal for another to approve (``transactions.approvals``)."""
    amount = format_amount(preview.amount, preview.scale, preview.asset_code)
    rows = preview_rows(preview)
    moves = ", ".join(f"{row['account']} {row['before']} → {row['after']}" for row in rows)
    summary = f"post {posting.template_code} {amount}: {moves}"
    approval = approvals.propose_posting(ledger, posting, summary=summary, reason=reason)
    url = admin_url(Approval, "change", approval.pk)
    messages.warning(
        request,
        format_html(
            'This posting needs a second person: <a href="{}">proposed for approval</a>; '
            "nothing moved yet.",
            url,
        ),
    )
    return HttpResponseRedirect(url)


def _scheduled(
    request: HttpRequest, ledger: Ledger, posting: engine.PostingRequest, at: dt.datetime
) -> HttpResponse:
    """Keep the posting for ``at`` (``scheduling.schedule``, as the API does) and show it."""
    body = scheduling.schedule(ledger, posting, at).body
    url = admin_url(ScheduledPosting, "change", body["id"])
    messages.success(
        request, format_html('Scheduled <a href="{}">{}</a> for {}.', url, body["id"], at)
    )
    return HttpResponseRedirect(url)
