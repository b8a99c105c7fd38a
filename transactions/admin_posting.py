"""The ledger's posting page in the admin (``.../post/``): pick a template, fill a form built
from its variables, preview with a dry run, then post (or schedule, or propose for approval)
through the engine like the API. It needs the view permission on the ledger and
``add_transaction``.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.utils.html import format_html

from ledgerproject import actors
from ledgerproject.amounts import format_amount, format_balance, parse_amount
from ledgerproject.errors import ErrorCode, LedgerError
from ledgerproject.metadata import validate_metadata
from organizations.admin import ReasonToAct, admin_url, reason_field
from organizations.models import Account, Ledger
from templates_dsl import ast
from templates_dsl.compile import compile_template
from templates_dsl.formatter import format_template
from templates_dsl.selectors import templates_active
from transactions import approvals, engine, scheduling
from transactions.admin_views import ledger_of_page, page_context
from transactions.models import Approval, ScheduledPosting, Transaction

MAX_ALIASES = 500


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
