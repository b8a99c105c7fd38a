"""Effective dates: a posting may say when the money moved (``effectiveAt``, never in the
future); it is echoed on the transaction and its operations, and reads choose their time axis:
the balance effective at a time, as the ledger knew it at a time, and the statement in either
order (docs/TIME.md)."""

from __future__ import annotations

import datetime as dt
import io
import time

import pytest
from django.core.management import call_command
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from ledgerproject.formats import render_timestamp
from organizations.models import Ledger
from tests.admin.helpers import staff_client
from tests.transactions.conftest import payment
from tests.transactions.test_double_entry_in_database import _next_of
from tests.transactions.test_inline import JSON, TEXT
from transactions.against_journal import _as_entry_has_it
from transactions.models import Operation, Transaction

pytestmark = pytest.mark.django_db


def _ago(days: float) -> dt.datetime:
    return timezone.now() - dt.timedelta(days=days)


def _at(days: float) -> str:
    return render_timestamp(_ago(days))


def _next_whole_second() -> dt.datetime:
    """The next whole second, once it has passed: times are answered to the second."""
    now = timezone.now()
    second = now.replace(microsecond=0) + dt.timedelta(seconds=1)
    time.sleep((second - now).total_seconds() + 0.01)
    return second


def _fund(book, alias: str, amount: int, **body) -> dict:
    response = book.post(
        {"transactionTypeCode": "FUND", "variables": {"amount": amount, "account": alias}, **body}
    )
    assert response.status_code == 201, response.content
    return response.json()


def _balance(book, alias: str, **query) -> dict:
    account = book.accounts[alias]
    response = book.api.get(f"{book.url}/accounts/{account['id']}/balance", query)
    assert response.status_code == 200, response.content
    body = response.json()
    return {k: body[k] for k in ("available", "onHold", "scale")}


def _statement(book, alias: str, **query) -> list[dict]:
    account = book.accounts[alias]
    response = book.api.get(f"{book.url}/accounts/{account['id']}/operations", query)
    assert response.status_code == 200, response.content
    return response.json()


def test_a_posting_takes_effect_when_it_is_posted_unless_it_says_otherwise(book):
    now = _fund(book, "@alice", 1_000)
    assert now["effectiveAt"] == now["createdAt"]
    assert {op["effectiveAt"] for op in now["operations"]} == {now["createdAt"]}

    earlier = _fund(book, "@alice", 500, effectiveAt="2026-01-31T23:30:00+0000")
    assert earlier["effectiveAt"] == "2026-01-31T23:30:00+0000"
    assert earlier["createdAt"] > earlier["effectiveAt"]
    assert {op["effectiveAt"] for op in earlier["operations"]} == {"2026-01-31T23:30:00+0000"}
    stored = Transaction.objects.get(pk=earlier["id"])
    assert stored.effective_at == dt.datetime(2026, 1, 31, 23, 30, tzinfo=dt.UTC)
    read = book.api.get(f"{book.url}/transactions/{earlier['id']}").json()
    assert read["effectiveAt"] == "2026-01-31T23:30:00+0000"


def test_an_effective_time_in_the_future_is_refused_and_nothing_is_written(book):
    before = Transaction.objects.count()
    tomorrow = render_timestamp(timezone.now() + dt.timedelta(days=1))
    response = book.post(
        {"transactionTypeCode": "FUND", "variables": {"amount": 5, "account": "@bob"},
         "effectiveAt": tomorrow}
    )  # fmt: skip
    assert response.status_code == 400
    assert response.json()["code"] == "0047"
    assert response.json()["fields"] == {"effectiveAt": "in the future"}
    malformed = book.post({**payment(1, 0), "effectiveAt": "last tuesday"})
    assert malformed.status_code == 400, malformed.content
    assert Transaction.objects.count() == before


def test_every_way_of_posting_carries_it(book):
    book.fund("@alice", 10_000)
    at = "2026-03-01T12:00:00+0000"
    dsl = book.api.post(f"{book.url}/transactions/dsl", {"dsl": TEXT, "effectiveAt": at})
    assert dsl.status_code == 201, dsl.content
    assert dsl.json()["effectiveAt"] == at
    inline = book.api.post(f"{book.url}/transactions/json", {**JSON, "effectiveAt": at})
    assert inline.status_code == 201, inline.content
    assert inline.json()["effectiveAt"] == at
    batch = book.api.post(
        f"{book.url}/transactions/batch",
        {"transactions": [{**payment(100, 0), "effectiveAt": at}, payment(100, 0)]},
    )
    assert batch.status_code == 201, batch.content
    first, second = batch.json()
    assert first["effectiveAt"] == at and second["effectiveAt"] == second["createdAt"]
    dry = book.api.post(
        f"{book.url}/transactions?dryRun=true", {**payment(100, 0), "effectiveAt": at}
    )
    assert dry.status_code == 200 and dry.json()["effectiveAt"] == at


def test_balances_are_checked_as_posted_whatever_the_effective_time(book):
    """A payment backdated to before the deposit that covers it is accepted: the check reads
    the balance as it stands when the payment is posted."""
    _fund(book, "@alice", 1_000)
    response = book.pay(800, 0, effectiveAt=_at(10))
    assert response.status_code == 201, response.content
    assert _balance(book, "@alice", at=_at(5)) == {"available": -800, "onHold": 0, "scale": 2}
    assert _balance(book, "@alice") == {"available": 200, "onHold": 0, "scale": 2}


def test_the_balance_on_either_time_axis(book):
    start = timezone.now()
    _fund(book, "@alice", 1_000, effectiveAt=_at(10))
    between = _next_whole_second()
    assert book.pay(200, 0, effectiveAt=_at(5)).status_code == 201

    # Before its first operation: zero, at the scale that operation found.
    assert _balance(book, "@alice", at=_at(11)) == {"available": 0, "onHold": 0, "scale": 0}
    assert _balance(book, "@alice", at=_at(7)) == {"available": 1_000, "onHold": 0, "scale": 2}
    assert _balance(book, "@alice", at=_at(3)) == {"available": 800, "onHold": 0, "scale": 2}
    assert _balance(book, "@alice") == {"available": 800, "onHold": 0, "scale": 2}
    # As the ledger knew it: before anything was posted, and between the two postings.
    assert _balance(book, "@alice", asOf=render_timestamp(start))["available"] == 0
    assert _balance(book, "@alice", asOf=render_timestamp(between))["available"] == 1_000
    known_then = _balance(book, "@alice", at=_at(3), asOf=render_timestamp(between))
    assert known_then["available"] == 1_000
    answer = book.api.get(
        f"{book.url}/accounts/{book.accounts['@alice']['id']}/balance",
        {"at": "2026-02-01", "asOf": render_timestamp(between)},
    ).json()
    assert answer["at"] == "2026-02-01T23:59:59+0000"  # the end of the day
    assert answer["asOf"] == render_timestamp(between)
    unknown = book.api.get(
        f"{book.url}/accounts/{book.accounts['@alice']['id']}/balance", {"when": "now"}
    )
    assert unknown.status_code == 400 and unknown.json()["code"] == "0082"


def test_the_statement_in_either_order(book):
    _fund(book, "@alice", 1_000)
    assert book.pay(300, 0, effectiveAt=_at(5)).status_code == 201
    _fund(book, "@alice", 50, effectiveAt=_at(10))

    posted = _statement(book, "@alice")
    assert [op["amount"]["amount"] for op in posted] == [1_000, 300, 50]
    assert [op["balanceAfter"]["available"] for op in posted] == [1_000, 700, 750]
    assert all("runningBalance" not in op for op in posted)

    effective = _statement(book, "@alice", order="effective")
    assert [op["amount"]["amount"] for op in effective] == [50, 300, 1_000]
    assert [op["runningBalance"]["available"] for op in effective] == [50, -250, 750]
    # Page by page, the running balance goes on where the page before ended.
    first = book.api.get(
        f"{book.url}/accounts/{book.accounts['@alice']['id']}/operations",
        {"order": "effective", "limit": 1},
    )
    cursor = first["X-Next-Cursor"]
    rest = _statement(book, "@alice", order="effective", cursor=cursor)
    assert [op["runningBalance"]["available"] for op in rest] == [-250, 750]
    newest_first = _statement(book, "@alice", order="effective", sort_order="desc")
    assert [op["runningBalance"]["available"] for op in newest_first] == [750, -250, 50]
    wrong = book.api.get(
        f"{book.url}/accounts/{book.accounts['@alice']['id']}/operations", {"order": "soon"}
    )
    assert wrong.status_code == 400 and wrong.json()["code"] == "0082"
    # A cursor of one order is not one of the other.
    mixed = book.api.get(
        f"{book.url}/accounts/{book.accounts['@alice']['id']}/operations", {"cursor": cursor}
    )
    assert mixed.status_code == 400 and mixed.json()["code"] == "0082"


def test_transaction_lists_filter_on_either_date(book):
    recent = _fund(book, "@alice", 1_000)
    old = _fund(book, "@alice", 20, effectiveAt="2026-02-10T10:00:00Z")
    listed = book.api.get(
        f"{book.url}/transactions", {"effectiveFrom": "2026-02-01", "effectiveTo": "2026-02-28"}
    ).json()
    assert [tx["id"] for tx in listed] == [old["id"]]
    since = book.api.get(f"{book.url}/transactions", {"effectiveFrom": "2026-03-01"}).json()
    assert recent["id"] in {tx["id"] for tx in since} and old["id"] not in {
        tx["id"] for tx in since
    }
    # Posted today, both of them.
    today = timezone.now().date().isoformat()
    both = book.api.get(f"{book.url}/transactions", {"beginDate": today}).json()
    assert {recent["id"], old["id"]} <= {tx["id"] for tx in both}
    account = book.accounts["@alice"]["id"]
    of_account = book.api.get(
        f"{book.url}/accounts/{account}/transactions", {"effectiveTo": "2026-02-28"}
    ).json()
    assert [tx["id"] for tx in of_account] == [old["id"]]
    empty = book.api.get(f"{book.url}/transactions", {"effectiveFrom": ""})
    assert empty.status_code == 400 and empty.json()["code"] == "0077"


def test_a_commit_takes_effect_when_it_says(book):
    book.fund("@alice", 10_000)
    held = book.post(
        {**payment(1_000, 0) | {"transactionTypeCode": "PAYMENT_HELD"}, "effectiveAt": _at(3)}
    ).json()
    url = f"{book.url}/transactions/{held['id']}/commit"
    too_early = book.api.post(url, {"effectiveAt": _at(4)})
    assert too_early.status_code == 400
    assert too_early.json()["fields"] == {"effectiveAt": "before the transaction's own"}
    future = book.api.post(url, {"effectiveAt": render_timestamp(_ago(-1))})
    assert future.status_code == 400
    committed_at = _at(2)
    committed = book.api.post(url, {"effectiveAt": committed_at})
    assert committed.status_code == 200, committed.content
    body = committed.json()
    assert body["effectiveAt"] == held["effectiveAt"]  # the transaction's own time stays
    by_effect = {(op["accountAlias"], op["effect"]): op["effectiveAt"] for op in body["operations"]}
    assert by_effect[("@alice", "HOLD")] == held["effectiveAt"]
    assert by_effect[("@alice", "SETTLE")] == committed_at
    assert by_effect[("@bob", "POST")] == committed_at
    assert _balance(book, "@bob", at=_at(2.5))["available"] == 0
    assert _balance(book, "@bob", at=_at(1.5))["available"] == 1_000


def test_a_revert_takes_effect_when_it_is_made_unless_it_says_otherwise(book):
    book.fund("@alice", 10_000)
    sent = book.pay(1_000, 0, effectiveAt=_at(30)).json()
    reverted = book.api.post(f"{book.url}/transactions/{sent['id']}/revert")
    assert reverted.status_code == 201, reverted.content
    reversal = reverted.json()
    assert reversal["effectiveAt"] == reversal["createdAt"]
    assert reversal["parentTransactionId"] == sent["id"]

    other = book.pay(500, 0, effectiveAt=_at(30)).json()
    at = _at(20)
    backdated = book.api.post(f"{book.url}/transactions/{other['id']}/revert", {"effectiveAt": at})
    assert backdated.status_code == 201, backdated.content
    assert backdated.json()["effectiveAt"] == at
    assert {op["effectiveAt"] for op in backdated.json()["operations"]} == {at}
    held = book.post({**payment(100, 0), "transactionTypeCode": "PAYMENT_HELD"}).json()
    canceled = book.api.post(f"{book.url}/transactions/{held['id']}/cancel", {"effectiveAt": at})
    assert canceled.status_code == 400  # before the hold itself
    malformed = book.api.post(f"{book.url}/transactions/{held['id']}/cancel", {"effective": at})
    assert malformed.status_code == 400 and malformed.json()["code"] == "0053"


def test_the_database_refuses_an_effective_time_after_the_posting(book):
    book.fund("@alice", 100)
    future = timezone.now() + dt.timedelta(days=1)
    value = future.isoformat() if connection.vendor == "sqlite" else future
    refused = pytest.raises(IntegrityError, match="transaction_effective_by_posting")
    with refused, transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("UPDATE transactions_transaction SET effective_at = %s", [value])
    # An operation is never updated: the next one of an account, written effective later.
    op = Operation.objects.filter(account_alias="@alice").get()
    refused = pytest.raises(IntegrityError, match="operation_effective_by_posting")
    with refused, transaction.atomic(), connection.cursor() as cursor:
        after = op.balance_available_after + op.amount  # a credit, at the balance's scale
        cursor.execute(*_next_of(op, balance_available_after=after, effective_at=value))


def test_the_command_posts_with_an_effective_time(book):
    ledger = Ledger.objects.get()
    out = io.StringIO()
    call_command(
        "post_transaction",
        organization=str(ledger.organization_id),
        ledger=str(ledger.pk),
        template="FUND",
        var=["amount=700", "account=@bob"],
        effective_at="2026-04-30T22:00:00Z",
        stdout=out,
    )
    tx = Transaction.objects.get(amount=700)
    assert tx.effective_at == dt.datetime(2026, 4, 30, 22, tzinfo=dt.UTC)
    assert set(Operation.objects.filter(transaction=tx).values_list("effective_at", flat=True)) == {
        tx.effective_at
    }


def test_a_journal_entry_written_before_operations_had_an_effective_time_still_matches():
    entry = [{"id": "1", "amount": {"amount": 5, "scale": 0}}]
    now = [{"id": "1", "amount": {"amount": 5, "scale": 0}, "effectiveAt": "2026-01-01T00:00Z"}]
    assert _as_entry_has_it(now, entry) == entry
    rewritten = [{"id": "1", "amount": {"amount": 6, "scale": 0}, "effectiveAt": "x"}]
    assert _as_entry_has_it(rewritten, entry) != entry


def test_the_admin_posting_page_takes_an_effective_time(book):
    ledger = Ledger.objects.get()
    client = staff_client(
        "organizations.view_ledger", "transactions.view_transaction", "transactions.add_transaction"
    )
    url = f"/admin/organizations/ledger/{ledger.pk}/post/"
    form = {
        "template": "FUND",
        "var_amount": "7.00",
        "var_account": "@bob",
        "_post": "1",
        "reason": "Desk request",
    }
    response = client.post(url, {**form, "effective_at": "2026-03-01T10:00"})
    assert response.status_code == 302, response.content.decode()[:2000]
    tx = Transaction.objects.get(amount=700)
    assert tx.effective_at == dt.datetime(2026, 3, 1, 10, tzinfo=dt.UTC)
    future = (timezone.now() + dt.timedelta(days=2)).strftime("%Y-%m-%dT%H:%M")
    refused = client.post(url, {**form, "effective_at": future})
    assert refused.status_code == 200
    assert "effectiveAt must not be in the future" in refused.content.decode()


def test_the_balance_known_at_a_moment_counts_what_was_backdated_to_it_later(book):
    """Read from the other end: the last operation written by ``at`` (its stored balance),
    plus what was written since and backdated to ``at`` or before."""
    _fund(book, "@alice", 1_000)
    _fund(book, "@alice", 2_000)
    at = _next_whole_second()
    _fund(book, "@alice", 40, effectiveAt=render_timestamp(at - dt.timedelta(days=1)))
    _fund(book, "@alice", 500)  # effective now: after ``at``
    assert _balance(book, "@alice", at=render_timestamp(at)) == {
        "available": 3_040,
        "onHold": 0,
        "scale": 2,
    }
    assert _balance(book, "@alice")["available"] == 3_540
