"""``states.preview``: what a commit, revert or cancel would write, from the same checks and
steps as the action, with nothing written (the back office's confirmation pages)."""

from __future__ import annotations

import uuid

import pytest
from django.utils import timezone

from ledgerproject.errors import LedgerError
from organizations.models import Account, Ledger
from transactions import states
from transactions.models import Operation, Transaction
from transactions.partial import Amount


def _ledger(book) -> Ledger:
    return Ledger.objects.get(pk=book.url.rstrip("/").rsplit("/", 1)[1])


def _rows(tx):
    return [
        (op.account_alias, op.type, op.effect, op.amount, op.balance_available,
         op.balance_on_hold, op.balance_available_after, op.balance_on_hold_after)
        for op in tx.operation_rows()
    ]  # fmt: skip


def _held(book, amount=1_000, fee=50):
    variables = {"amount": amount, "fee": fee, "source": "@alice", "destination": "@bob"}
    response = book.post({"transactionTypeCode": "PAYMENT_HELD", "variables": variables})
    assert response.status_code == 201, response.content
    return response.json()


def _nothing_written(before: tuple[int, int]) -> None:
    assert (Transaction.objects.count(), Operation.objects.count()) == before


def _counts() -> tuple[int, int]:
    return Transaction.objects.count(), Operation.objects.count()


def test_a_revert_preview_is_what_the_revert_writes(book):
    book.fund("@alice", 5_000)
    tx = book.pay(1_000, 50).json()
    ledger, before = _ledger(book), _counts()
    preview = states.preview("revert", ledger=ledger, transaction_id=uuid.UUID(tx["id"]))
    _nothing_written(before)
    assert preview.is_reversal and preview.parent_id == uuid.UUID(tx["id"])
    assert ("@alice", "CREDIT", "POST", 1_050, 3_950, 0, 5_000, 0) in _rows(preview)
    reverted = book.api.post(f"{book.url}/transactions/{tx['id']}/revert").json()
    written = Transaction.objects.get(pk=reverted["id"])
    assert sorted(_rows(preview)) == sorted(_rows(written))


def test_a_commit_preview_in_full_and_in_part(book):
    book.fund("@alice", 5_000)
    tx = _held(book)
    ledger, before = _ledger(book), _counts()
    full = states.preview("commit", ledger=ledger, transaction_id=uuid.UUID(tx["id"]))
    assert ("@alice", "DEBIT", "SETTLE", 1_050, 3_950, 1_050, 3_950, 0) in _rows(full)
    assert ("@bob", "CREDIT", "POST", 1_000, 0, 0, 1_000, 0) in _rows(full)
    variables = {"amount": 800, "account": "@bob"}  # one source, one destination
    one_to_one = book.post({"transactionTypeCode": "FUND", "pending": True, "variables": variables})
    held = uuid.UUID(one_to_one.json()["id"])
    before = _counts()
    part = states.preview("commit", ledger=ledger, transaction_id=held, amount=Amount(500, 2))
    _nothing_written(before)
    assert Transaction.objects.get(pk=held).amount == 800  # the preview's rewrite not saved
    assert ("@bob", "CREDIT", "POST", 500, 0, 0, 500, 0) in _rows(part)
    committed = states.commit(ledger=ledger, transaction_id=held, amount=Amount(500, 2))
    written = Operation.objects.filter(transaction_id=held, effect__in=["SETTLE", "RELEASE"])
    written = [*written, *Operation.objects.filter(transaction_id=held, account_alias="@bob")]
    assert committed.amount == 500 and sorted(_rows(part)) == sorted(
        (op.account_alias, op.type, op.effect, op.amount, op.balance_available,
         op.balance_on_hold, op.balance_available_after, op.balance_on_hold_after)
        for op in written
    )  # fmt: skip


def test_a_cancel_preview_releases_the_hold(book):
    book.fund("@alice", 5_000)
    tx = _held(book)
    ledger, before = _ledger(book), _counts()
    for verb in ("cancel", "revert"):  # a revert of a pending transaction is its cancel
        preview = states.preview(verb, ledger=ledger, transaction_id=uuid.UUID(tx["id"]))
        assert _rows(preview) == [("@alice", "CREDIT", "RELEASE", 1_050, 3_950, 1_050, 5_000, 0)]
    _nothing_written(before)


@pytest.mark.parametrize(
    ("verb", "code"), [("commit", "0099"), ("cancel", "0087"), ("revert", "0087")]
)
def test_a_preview_is_refused_as_the_action_would_be(book, verb, code):
    book.fund("@alice", 5_000)
    tx = book.pay(1_000, 50).json()
    ledger = _ledger(book)
    assert book.api.post(f"{book.url}/transactions/{tx['id']}/revert").status_code == 201
    with pytest.raises(LedgerError) as refused:
        states.preview(verb, ledger=ledger, transaction_id=uuid.UUID(tx["id"]))
    assert refused.value.error.code == code
    api = book.api.post(f"{book.url}/transactions/{tx['id']}/{verb}")
    assert api.json()["code"] == code


def test_a_preview_of_too_much_is_refused_with_insufficient_funds(book):
    book.fund("@alice", 2_000)
    tx = book.pay(1_000, 50).json()
    spent = {"amount": 900, "fee": 0, "source": "@bob", "destination": "@alice"}
    book.post({"transactionTypeCode": "PAYMENT_WITH_FEE", "variables": spent})
    with pytest.raises(LedgerError) as refused:
        states.preview("revert", ledger=_ledger(book), transaction_id=uuid.UUID(tx["id"]))
    assert refused.value.error.code == "0018"


def test_a_transaction_of_another_ledger_is_not_found(book, api):
    book.fund("@alice", 5_000)
    tx = book.pay(1_000, 50).json()
    ledger = _ledger(book)
    other = api.post(f"/v1/organizations/{ledger.organization_id}/ledgers", {"name": "Other"})
    assert other.status_code == 201
    elsewhere = Ledger.objects.get(pk=other.json()["id"])
    with pytest.raises(LedgerError) as refused:
        states.preview("revert", ledger=elsewhere, transaction_id=uuid.UUID(tx["id"]))
    assert refused.value.error.code == "0007"


def test_a_preview_in_a_deleted_ledger_or_of_a_deleted_account_is_refused(book, api):
    book.fund("@alice", 5_000)
    tx = book.pay(1_000, 50).json()  # a leg on @fees/platform
    ledger = _ledger(book)
    Account.objects.filter(alias="@fees/platform").update(deleted_at=timezone.now())
    with pytest.raises(LedgerError) as refused:
        states.preview("revert", ledger=ledger, transaction_id=uuid.UUID(tx["id"]))
    assert refused.value.error.code == "0024"
    assert "@fees/platform was deleted" in refused.value.description
    Ledger.objects.filter(pk=ledger.pk).update(deleted_at=timezone.now())
    ledger.refresh_from_db()
    with pytest.raises(LedgerError) as refused:
        states.preview("revert", ledger=ledger, transaction_id=uuid.UUID(tx["id"]))
    assert refused.value.error.code == "0008"  # as the action is refused
    with pytest.raises(LedgerError) as acted:
        states.revert(ledger=ledger, transaction_id=uuid.UUID(tx["id"]))
    assert acted.value.error.code == "0008"
