"""``states.preview``: what a commit, revert or cancel would write, from the same checks and
steps as the action, with nothing written (the back office's confirmation pages)."""

from __future__ import annotations

import uuid

import pytest

from ledgerproject.errors import LedgerError
from organizations.models import Ledger
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
    one_to_one = book.post(
        {
            "transactionTypeCode": "FUND",
            "pending": True,
            "variables": {"amount": 800, "account": "@bob"},
        }
    ).json()  # a partial commit needs one source and one destination
    part = states.preview(
        "commit", ledger=ledger, transaction_id=uuid.UUID(one_to_one["id"]), amount=Amount(500, 2)
    )
    assert ("@bob", "CREDIT", "POST", 500, 0, 0, 500, 0) in _rows(part)
    before = _counts()
    _nothing_written(before)
    assert Transaction.objects.get(pk=tx["id"]).status == "PRE_APPROVED"
    assert Transaction.objects.get(pk=tx["id"]).amount == 1_050


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


def test_a_transaction_of_another_ledger_is_not_found(book):
    with pytest.raises(LedgerError) as refused:
        states.preview("revert", ledger=_ledger(book), transaction_id=uuid.uuid4())
    assert refused.value.error.code == "0007"
