"""Commit, cancel, revert and expire in the back office, each confirmed before money moves.

A transaction's page links to a confirmation page per action (``.../<id>/act/<verb>/``): it
shows what the action would write now (``states.preview``: each operation with the balance
before and after), or the refusal it would meet, and asks for a reason; a commit may name an
amount to settle less than the hold (a partial commit). Confirming runs the action through the
same service as the API, inside ``actors.reason``, so the action's event keeps the reason beside
the staff user. The list's actions confirm the same way, for every selected transaction at
once, each with its own preview. All of it needs the ``change_transaction`` permission.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.admin import helpers
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.utils.html import format_html

from ledgerproject import actors
from ledgerproject.amounts import format_amount, parse_amount
from ledgerproject.errors import LedgerError
from organizations.admin import ReasonToAct, admin_link, admin_url, reason_field
from transactions import approvals, states
from transactions.admin_posting import preview_rows
from transactions.models import Approval, Transaction
from transactions.partial import Amount

VERBS = {
    "commit": "Commit",
    "cancel": "Cancel",
    "revert": "Revert",
    "expire": "Expire",
}
WHAT = {
    "commit": "settles the hold: the sources' held money goes to the destinations",
    "cancel": "releases the hold: the money held goes back to the sources' available balance",
    "revert": "posts a reversal: every leg mirrored, the money goes back where it came from",
    "expire": "cancels the hold now that its expiry has passed, as the expiry worker would: "
    "the money held goes back to the sources' available balance",
}
# The most transactions one confirmation previews: each preview reads the transaction and its
# balances, and a page of the list holds fewer.
MAX_SELECTED = 100


class ActionForm(ReasonToAct, forms.Form):
    """The reason (needed to confirm, not to preview) and, for one commit, the amount."""

    reason = reason_field("Why, needed to confirm (not to preview).", required=False)
    amount = forms.CharField(
        required=False,
        max_length=60,
        help_text="Leave empty to commit the whole hold; an amount commits that much and "
        "releases the rest.",
    )

    def __init__(
        self,
        *args: Any,
        verb: str,
        confirming: bool,
        tx: Transaction | None = None,
        **kwargs: Any,
    ):
        super().__init__(*args, **kwargs)
        self.tx, self.acting = tx, confirming
        if verb != "commit" or tx is None:
            del self.fields["amount"]

    def clean_amount(self) -> Amount | None:
        text = self.cleaned_data.get("amount") or ""
        if not text.strip() or self.tx is None:
            return None
        try:
            return Amount(parse_amount(text, self.tx.scale, self.tx.asset_code), self.tx.scale)
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None


def _preview(verb: str, tx: Transaction, amount: Amount | None) -> dict[str, Any]:
    """What ``verb`` would write for ``tx`` now, or the refusal it would meet."""
    try:
        shown = states.preview(verb, ledger=tx.ledger, transaction_id=tx.pk, amount=amount)
    except LedgerError as exc:
        return {"tx": tx, "refusal": f"{exc.error.code} {exc.description}"}
    amount_text = format_amount(shown.amount, shown.scale, shown.asset_code)
    return {"tx": tx, "rows": preview_rows(shown), "amount": amount_text}


def _act(
    request: HttpRequest,
    verb: str,
    tx: Transaction,
    amount: Amount | None,
    reason: str,
    proposed: set[Any],
) -> bool:
    """Run ``verb`` on ``tx`` as the API does, or propose it when a rule of the ledger says it
    needs a second person (``proposed``: ``_proposed``); a message says what happened."""
    if tx.pk in proposed:
        return _propose_revert(request, tx, reason)
    arguments = {"amount": amount} if amount is not None else {}
    try:
        result = states.ACTIONS[verb](ledger=tx.ledger, transaction_id=tx.pk, **arguments)
    except LedgerError as exc:
        messages.error(request, f"{tx.pk}: {verb} refused — {exc.error.code} {exc.description}")
        return False
    if verb == "commit":
        done = format_amount(result.amount, result.scale, result.asset_code)
        messages.success(request, f"{tx.pk}: committed {done}, now {result.status}.")
    else:
        pending = tx.status == Transaction.PRE_APPROVED
        kind = "expired" if verb == "expire" else "canceled" if pending else "reverted"
        link = admin_link(Transaction, result.pk, str(result.pk))
        messages.success(request, format_html("{}: {} by {}.", str(tx.pk), kind, link))
    return True


def _propose_revert(request: HttpRequest, tx: Transaction, reason: str) -> bool:
    """Propose the revert for approval, unless it is proposed already."""
    waiting = approvals.pending_revert(tx)
    if waiting is not None:
        link = admin_link(Approval, waiting.pk, "waits for approval")
        messages.error(request, format_html("{}: its revert {} already.", str(tx.pk), link))
        return False
    amount = format_amount(tx.amount, tx.scale, tx.asset_code)
    summary = f"revert {tx.type} {tx.pk} ({amount}): every leg mirrored"
    approval = approvals.propose_revert(tx.ledger, tx, summary=summary, reason=reason)
    link = admin_link(Approval, approval.pk, "proposed for approval")
    messages.warning(
        request, format_html("{}: this revert needs a second person: {}.", str(tx.pk), link)
    )
    return True


def _proposed(verb: str, selected: list[Transaction]) -> set[Any]:
    """The selected a rule of their ledger sends for approval: confirming proposes those
    instead of doing them."""
    return approvals.reverts_needing_approval(selected) if verb == "revert" else set()


def confirm(request: HttpRequest, object_id: str, verb: str, *, model_admin: Any) -> HttpResponse:
    """One transaction's confirmation page for ``verb``."""
    if verb not in VERBS:
        raise Http404("No such action.")
    if not model_admin.has_operate_permission(request):
        raise PermissionDenied
    tx = model_admin.get_object(request, unquote(object_id))
    if tx is None:
        raise Http404("No such transaction.")
    page = admin_url(Transaction, "change", tx.pk)
    posted = request.POST if request.method == "POST" else None
    form = ActionForm(posted, verb=verb, confirming="_confirm" in request.POST, tx=tx)
    valid = form.is_valid()
    # The preview shows the amount asked for, whatever else the form lacks; none while the
    # amount itself is not one.
    amount_ok = "amount" not in form.errors
    amount = form.cleaned_data.get("amount") if posted is not None and amount_ok else None
    if valid and form.acting:
        reason = form.cleaned_data["reason"]
        with actors.reason(reason):
            if _act(request, verb, tx, amount, reason, _proposed(verb, [tx])):
                return HttpResponseRedirect(page)
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.opts,
        "title": f"{VERBS[verb]} transaction {tx.pk}?",
        "verb": verb,
        "label": VERBS[verb],
        "what": WHAT[verb],
        "form": form,
        "previews": [_preview(verb, tx, amount)] if amount_ok else [],
        "proposed": len(_proposed(verb, [tx])),
        "back": page,
    }
    return TemplateResponse(request, "admin/transactions/transaction/confirm_action.html", context)


def confirm_selected(
    model_admin: Any, request: HttpRequest, queryset: QuerySet[Transaction], verb: str
) -> HttpResponse | None:
    """A list action: first a page that previews ``verb`` on each selected transaction and asks
    for one reason; once confirmed, the action on each in turn (None: back to the list)."""
    selected = list(
        queryset.select_related("ledger").order_by("created_at", "id")[: MAX_SELECTED + 1]
    )
    if len(selected) > MAX_SELECTED:
        messages.error(request, f"Select at most {MAX_SELECTED} transactions for one {verb}.")
        return None
    confirming = "_confirm" in request.POST
    form = ActionForm(request.POST if confirming else None, verb=verb, confirming=confirming)
    if form.is_valid():
        reason = form.cleaned_data["reason"]
        proposed = _proposed(verb, selected)
        with actors.reason(reason):
            for tx in selected:
                _act(request, verb, tx, None, reason, proposed)
        return None
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.opts,
        "title": f"{VERBS[verb]} {len(selected)} transaction{'s' * (len(selected) != 1)}?",
        "verb": verb,
        "label": VERBS[verb],
        "what": WHAT[verb],
        "form": form,
        "previews": [_preview(verb, tx, None) for tx in selected],
        "proposed": len(_proposed(verb, selected)),
        "action": f"{verb}_transactions",
        "selected_name": helpers.ACTION_CHECKBOX_NAME,
        "back": admin_url(Transaction),
    }
    return TemplateResponse(request, "admin/transactions/transaction/confirm_action.html", context)
