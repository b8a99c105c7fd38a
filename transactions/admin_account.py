"""An account's page in the back office (``.../account/<id>/page/``): its status and what it
lets the account do, its balance (and its tree's, rolled up, when it has accounts under it), a
chart of its balance at the end of each of the last 30 days, its latest transactions, and its
statement for a period of the ledger's days (``transactions.statements``): the opening
balance, each operation with the running balance, the closing balance; as CSV, and as a
printable page. *Freeze* and *Unfreeze* change its status from the page, each confirmed with
what it will do and a reason (``.../status/<code>/``), through the same service as the API.

Needs the view permission on accounts (the statement: on operations too, as the operation list
does); freezing needs the change permission."""

from __future__ import annotations

import datetime as dt
import itertools
import zoneinfo
from collections.abc import Iterator
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseRedirect,
    StreamingHttpResponse,
)
from django.template.response import TemplateResponse
from django.utils import timezone

from ledgerproject import actors
from ledgerproject.admin_csv import csv_response
from ledgerproject.amounts import format_amount, format_balance
from ledgerproject.errors import LedgerError
from organizations import contents, rollups
from organizations.admin import ReasonForm, admin_url
from organizations.models import ACCOUNT_STATUSES, Account, Balance, Ledger
from transactions import selectors
from transactions.charts_svg import Bar, vertical_bars
from transactions.models import Transaction
from transactions.money import change_of
from transactions.statements import MAX_DAYS, Statement, statement_for

RECENT = 10
HISTORY_DAYS = 30
# The most statement lines the page shows; the CSV has them all.
MAX_LINES = 500
# Freeze and unfreeze: the status each sets.
FROZEN, ACTIVE = "FROZEN", "ACTIVE"


class PeriodForm(forms.Form):
    first_day = forms.DateField(label="From", widget=forms.DateInput(attrs={"type": "date"}))
    last_day = forms.DateField(label="To", widget=forms.DateInput(attrs={"type": "date"}))

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        first, last = data.get("first_day"), data.get("last_day")
        if first and last and (last < first or (last - first).days >= MAX_DAYS):
            raise forms.ValidationError(
                f"A statement covers 1 to {MAX_DAYS} days: the first day, then the last."
            )
        return data


def _account(request: HttpRequest, object_id: str, model_admin: Any) -> Account:
    account = model_admin.get_object(request, unquote(object_id))
    if account is None:
        raise Http404("No such account.")
    if not model_admin.has_view_permission(request, account):
        raise PermissionDenied
    return account


def account_page(
    request: HttpRequest, object_id: str, *, model_admin: Any
) -> HttpResponse | StreamingHttpResponse:
    account = _account(request, object_id, model_admin)
    ledger: Ledger = account.ledger
    today = timezone.now().astimezone(zoneinfo.ZoneInfo(ledger.time_zone)).date()
    form = PeriodForm(
        request.GET if "first_day" in request.GET else None,
        initial={"first_day": today.replace(day=1), "last_day": today},
    )
    period = (today.replace(day=1), today)
    if form.is_bound and form.is_valid():
        period = (form.cleaned_data["first_day"], form.cleaned_data["last_day"])
    may_read_operations = request.user.has_perm("transactions.view_operation")
    statement = statement_for(account, *period) if may_read_operations else None
    if statement is not None and request.GET.get("format") == "csv":
        name = f"statement-{account.alias or account.pk}-{period[0]}-{period[1]}.csv"
        return csv_response(_csv_rows(statement), name)
    lines = list(itertools.islice(statement.lines(), MAX_LINES + 1)) if statement else []
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.opts,
        "original": account,
        "account": account,
        "title": f"Account {account.alias or account.name or account.pk}",
        "subtitle": f"{ledger.name} · {account.asset_code}",
        "status": ACCOUNT_STATUSES.get(account.status_code),
        "balance": _balance(account),
        "rolled_up": _rolled_up(account),
        "history": _history(account, today),
        "recent": _recent(account),
        "form": form,
        "statement": statement,
        "lines": [_line(op, running, account) for op, running in lines[:MAX_LINES]],
        "more_lines": len(lines) > MAX_LINES,
        "may_change": model_admin.has_change_permission(request, account),
        "printable": request.GET.get("print") == "1",
        "links": {
            "change": admin_url(Account, "change", account.pk),
            "ledger": admin_url(Ledger, "change", ledger.pk),
            "transactions": admin_url(Transaction, ledger=ledger.pk) + f"&q={account.alias}"
            if account.alias
            else None,
            "freeze": admin_url(Account, "status", account.pk, FROZEN),
            "unfreeze": admin_url(Account, "status", account.pk, ACTIVE),
        },
        "period_query": f"first_day={period[0]}&last_day={period[1]}",
    }
    if statement is not None:
        context["opening"] = _shown(statement.opening, account)
        context["closing"] = _shown(statement.closing, account)
    return TemplateResponse(request, "admin/organizations/account/page.html", context)


def _shown(balance: dict[str, int], account: Account) -> str:
    return format_balance(
        balance["available"], balance["onHold"], balance["scale"], account.asset_code
    )


def _balance(account: Account) -> dict[str, str] | None:
    balance = Balance.objects.filter(
        organization_id=account.organization_id, account_id=account.pk
    ).first()
    if balance is None:
        return None
    asset = account.asset_code
    return {
        "available": format_amount(balance.available, balance.scale, asset),
        "on_hold": format_amount(balance.on_hold, balance.scale, asset),
        "overdraft_limit": format_amount(balance.overdraft_limit, balance.scale, asset),
    }


def _rolled_up(account: Account) -> list[str]:
    """Its tree's balance per asset, when accounts are under it."""
    if not Account.objects.filter(
        organization_id=account.organization_id,
        parent_account_id=account.pk,
        deleted_at__isnull=True,
    ).exists():
        return []
    totals = rollups.rolled_up_now(account.ledger, [account.pk]).get(account.pk, {})
    return [
        format_balance(values["available"], values["onHold"], values["scale"], asset)
        for asset, values in sorted(totals.items())
    ]


def _history(account: Account, today: dt.date) -> Any:
    """The available balance at the end of each of the last ``HISTORY_DAYS`` days (a day
    below zero is drawn empty; its label says how much)."""
    first = today - dt.timedelta(days=HISTORY_DAYS - 1)
    days = statement_for(account, first, today).daily()
    bars = [
        Bar(
            day.isoformat(),
            balance["available"] / 10 ** balance["scale"],
            format_amount(balance["available"], balance["scale"], account.asset_code),
        )
        for day, balance in days
    ]
    return vertical_bars(bars, title="Available balance at the end of each day", tick=_md)


def _md(label: str) -> str:
    return label[5:]


def _recent(account: Account) -> list[dict[str, Any]]:
    found = selectors.transactions_of_account(account).order_by("-created_at", "-id")[:RECENT]
    return [
        {
            "url": admin_url(Transaction, "change", tx.pk),
            "tx": tx,
            "amount": format_amount(tx.amount, tx.scale, tx.asset_code),
        }
        for tx in found
    ]


def _line(op: Any, running: dict[str, int], account: Account) -> dict[str, Any]:
    """A statement line: what the operation did to the available balance and to what is on
    hold, signed, and the balance after it."""
    moved, held = change_of(op.type, op.effect, op.amount)
    return {
        "op": op,
        "transaction_url": admin_url(Transaction, "change", op.transaction_id),
        "available": format_amount(moved, op.scale) if moved else "",
        "on_hold": format_amount(held, op.scale) if held else "",
        "running": _shown(running, account),
    }


def _csv_rows(statement: Statement) -> Iterator[list[Any]]:
    """The statement as CSV rows, streamed: a header, the opening line, one line per
    operation with the running balance, the closing line."""
    scale, asset = statement.scale, statement.account.asset_code

    def balance(at: dt.datetime, what: str, figures: dict[str, int]) -> list[Any]:
        amounts = [
            format_amount(figures["available"], scale),
            format_amount(figures["onHold"], scale),
        ]
        return [at.isoformat(), "", what, "", "", "", asset, *amounts]

    yield ["effective_at", "transaction_id", "description", "type", "effect", "amount",
           "asset_code", "available_after", "on_hold_after"]  # fmt: skip
    yield balance(statement.start, "opening balance", statement.opening)
    for op, running in statement.lines():
        yield [
            op.effective_at.isoformat(), op.transaction_id, op.description or "", op.type,
            op.effect, format_amount(op.amount, op.scale), asset,
            format_amount(running["available"], scale), format_amount(running["onHold"], scale),
        ]  # fmt: skip
    yield balance(statement.end, "closing balance", statement.closing)


def account_status(
    request: HttpRequest, object_id: str, code: str, *, model_admin: Any
) -> HttpResponse:
    """Freeze (``FROZEN``) or unfreeze (``ACTIVE``) the account: a page that says what the
    change will do and asks for a reason; confirmed, the change goes through the service."""
    if code not in (FROZEN, ACTIVE):
        raise Http404("No such change.")
    account = _account(request, object_id, model_admin)
    if not model_admin.has_change_permission(request, account):
        raise PermissionDenied
    page = admin_url(Account, "page", account.pk)
    form = ReasonForm(request.POST if request.method == "POST" else None)
    if form.is_valid():
        try:
            with actors.reason(form.cleaned_data["reason"]):
                contents.account_update(account=account, data={"status_code": code})
        except LedgerError as exc:
            form.add_error(None, f"{exc.error.code}: {exc.description}")
        else:
            messages.success(request, f"{account.alias or account.pk} is now {code}.")
            return HttpResponseRedirect(page)
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.opts,
        "original": account,
        "title": f"{'Freeze' if code == FROZEN else 'Unfreeze'} {account.alias or account.pk}?",
        "what": model_admin.explain_change(account, "status_code", account.status_code, code),
        "unchanged": account.status_code == code,
        "form": form,
        "back": page,
    }
    return TemplateResponse(request, "admin/organizations/account/status.html", context)
