"""An account's page in the back office (``transactions.admin_account``): status, balance,
its tree's balance, history, latest transactions, the statement of a period (opening, each
operation with its running balance, closing) as a page, CSV and printable, and freeze and
unfreeze confirmed with what they do and a reason."""

from __future__ import annotations

import csv
import datetime as dt
import io

from django.utils import timezone

from organizations.models import Account
from outbox.models import Event
from tests.admin.helpers import staff_client
from transactions.statements import statement_for


def _page(client, account: Account, **query):
    response = client.get(f"/admin/organizations/account/{account.pk}/page/", query)
    assert response.status_code == 200, response.status_code
    return response


def _ago(days: int) -> str:
    return (timezone.now() - dt.timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%S+0000")


def test_the_page_shows_the_balance_the_latest_transactions_and_this_month(admin_client, book):
    book.fund("@alice", 10_000)
    book.pay(2500, 100)
    alice = Account.objects.get(alias="@alice")
    response = _page(admin_client, alice)
    html = response.content.decode()
    assert "ACTIVE: sends and receives" in html
    assert 'id="balance-available">74.00 BRL' in html
    assert [row["tx"].type for row in response.context["recent"]] == ["PAYMENT_WITH_FEE", "FUND"]
    assert html.count("<rect") == 30  # a bar per day of the last 30
    running = [line["running"] for line in response.context["lines"]]
    assert running == ["100.00 BRL", "74.00 BRL"]
    assert response.context["opening"] == "0.00 BRL"
    assert response.context["closing"] == "74.00 BRL"
    assert [line["available"] for line in response.context["lines"]] == ["100.00", "-26.00"]
    account_list = admin_client.get("/admin/organizations/account/").content.decode()
    assert f"/admin/organizations/account/{alice.pk}/page/" in account_list


def test_a_period_opens_with_what_took_effect_before_it(admin_client, book):
    book.post({"transactionTypeCode": "FUND", "effectiveAt": _ago(5),
               "variables": {"amount": 10_000, "account": "@alice"}})  # fmt: skip
    book.pay(2500, 100, effectiveAt=_ago(1))
    book.pay(100, 0)
    alice = Account.objects.get(alias="@alice")
    first = (timezone.now() - dt.timedelta(days=2)).date()
    last = timezone.now().date()
    response = _page(admin_client, alice, first_day=first, last_day=last)
    assert response.context["opening"] == "100.00 BRL"
    assert [line["running"] for line in response.context["lines"]] == ["74.00 BRL", "73.00 BRL"]
    assert response.context["closing"] == "73.00 BRL"
    # the same as CSV: header, opening, the two operations, closing
    rows = list(csv.reader(io.StringIO(b"".join(
        _page(admin_client, alice, first_day=first, last_day=last, format="csv").streaming_content
    ).decode())))  # fmt: skip
    assert rows[0][:3] == ["effective_at", "transaction_id", "description"]
    assert [row[2] for row in (rows[1], rows[-1])] == ["opening balance", "closing balance"]
    assert [row[7] for row in rows[1:]] == ["100.00", "74.00", "73.00", "73.00"]
    # an earlier period knows nothing of what took effect after it
    old = _page(admin_client, alice, first_day=first - dt.timedelta(days=10),
                last_day=first - dt.timedelta(days=6))  # fmt: skip
    assert (old.context["opening"], old.context["closing"]) == ("0.00 BRL", "0.00 BRL")
    assert old.context["lines"] == []


def test_a_wrong_period_is_refused_on_the_form(admin_client, book):
    alice = Account.objects.get(alias="@alice")
    today = timezone.now().date()
    response = _page(admin_client, alice, first_day=today, last_day=today - dt.timedelta(days=1))
    assert "A statement covers 1 to 366 days" in response.content.decode()
    too_long = _page(admin_client, alice, first_day=today - dt.timedelta(days=400), last_day=today)
    assert "A statement covers 1 to 366 days" in too_long.content.decode()


def test_the_printable_statement_has_no_back_office_around_it(admin_client, book):
    alice = Account.objects.get(alias="@alice")
    html = _page(admin_client, alice, print="1").content.decode()
    assert 'id="statement"' in html and 'id="header"' not in html and "nav-sidebar" not in html


def test_the_tree_s_balance_is_shown_when_accounts_are_under_it(admin_client, book):
    book.fund("@alice", 10_000)
    parent = book.account("@group")
    patched = book.api.patch(
        f"{book.url}/accounts/{book.accounts['@alice']['id']}", {"parentAccountId": parent["id"]}
    )
    assert patched.status_code == 200, patched.content
    group = Account.objects.get(alias="@group")
    assert _page(admin_client, group).context["rolled_up"] == ["100.00 BRL"]
    assert _page(admin_client, Account.objects.get(alias="@alice")).context["rolled_up"] == []


def test_without_the_operations_permission_the_page_shows_no_statement(book):
    book.fund("@alice", 10_000)
    client = staff_client("organizations.view_account", "transactions.view_transaction")
    response = _page(client, Account.objects.get(alias="@alice"))
    assert response.context["statement"] is None
    assert "needs the permission to view operations" in response.content.decode()
    assert 'id="freeze"' not in response.content.decode()


def test_freeze_and_unfreeze_say_what_they_do_and_need_a_reason(admin_client, book):
    bob = Account.objects.get(alias="@bob")
    url = f"/admin/organizations/account/{bob.pk}/status/FROZEN/"
    assert f'href="{url}"' in _page(admin_client, bob).content.decode()
    shown = admin_client.get(url).content.decode()
    assert "status: ACTIVE → FROZEN: the account neither sends nor receives" in shown
    refused = admin_client.post(url, {"reason": " "})
    assert refused.status_code == 200 and Account.objects.get(pk=bob.pk).status_code == "ACTIVE"
    done = admin_client.post(url, {"reason": "Card stolen"})
    assert done.status_code == 302 and done["Location"].endswith(f"/{bob.pk}/page/")
    assert Account.objects.get(pk=bob.pk).status_code == "FROZEN"
    event = Event.objects.filter(type="account.updated").latest("seq")
    assert (event.reason, event.actor_kind) == ("Card stolen", "staff")
    unfreeze = f"/admin/organizations/account/{bob.pk}/status/ACTIVE/"
    assert f'href="{unfreeze}"' in _page(admin_client, bob).content.decode()
    assert admin_client.post(unfreeze, {"reason": "Found"}).status_code == 302
    assert Account.objects.get(pk=bob.pk).status_code == "ACTIVE"
    assert (
        admin_client.get(f"/admin/organizations/account/{bob.pk}/status/CLOSED/").status_code == 404
    )
    viewer = staff_client("organizations.view_account")
    assert viewer.get(url).status_code == 403
    assert viewer.post(url, {"reason": "x"}).status_code == 403


def test_the_statement_is_what_the_books_held_when_it_was_asked_for(book):
    """Lines read later (a CSV streams them) add up to the closing read with the opening: a
    posting written meanwhile, even into the period, is in neither."""
    book.fund("@alice", 10_000)
    alice = Account.objects.get(alias="@alice")
    today = timezone.now().date()
    statement = statement_for(alice, today, today)
    book.pay(2_500, 100)  # after the statement was asked for
    lines = list(statement.lines())
    assert [running["available"] for _, running in lines] == [10_000]
    assert lines[-1][1] == statement.closing == {"available": 10_000, "onHold": 0, "scale": 2}
    assert [balance for _, balance in statement.daily()][-1] == statement.closing
