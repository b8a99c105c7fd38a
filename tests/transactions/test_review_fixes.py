"""Regressions found by an independent review of the posting path: writes that could land in an
account or instrument deleted meanwhile, numbers that crashed the parser, batch refusals in
index order, and postings into a deleted ledger."""

from __future__ import annotations

import pytest

from tests.conftest import assert_error
from tests.transactions.test_batch import fund, pay, post_batch
from transactions.models import Transaction


def test_it_refuses_to_commit_into_an_account_deleted_while_pending(book):
    book.fund("@alice", 1_000)
    held = book.pay(100, 0, pending=True).json()
    assert book.api.delete(f"{book.url}/accounts/{book.accounts['@bob']['id']}").status_code == 204
    assert_error(book.api.post(f"{book.url}/transactions/{held['id']}/commit"), 422, "0024")
    assert Transaction.objects.get(pk=held["id"]).status == "PRE_APPROVED"
    assert book.api.post(f"{book.url}/transactions/{held['id']}/cancel").status_code == 201
    assert book.balance("@alice") == {"available": 1_000, "onHold": 0, "scale": 2}


def test_it_refuses_to_revert_into_a_deleted_account(book):
    book.fund("@alice", 1_000)
    tx = book.pay(100, 0).json()
    book.pay(100, 0, source="@bob", destination="@alice")
    assert book.api.delete(f"{book.url}/accounts/{book.accounts['@bob']['id']}").status_code == 204
    assert_error(book.api.post(f"{book.url}/transactions/{tx['id']}/revert"), 422, "0024")


def test_it_keeps_an_instrument_while_any_hold_is_open(book):
    text = (
        "(transaction-template v1 (chart-of-accounts-group-name G) (code HELD_COIN) (pending true)"
        " (send COIN $a|0 (source (from @external/COIN :amount COIN $a|0)))"
        " (distribute (to @coins :amount COIN $a|0)))"
    )
    coin = book.api.post(
        f"{book.url}/instruments", {"name": "Coin", "type": "crypto", "code": "COIN"}
    ).json()
    book.api.post(f"{book.url}/accounts", {"alias": "@coins", "assetCode": "COIN"})
    book.post_template(text)
    held = book.post({"transactionTypeCode": "HELD_COIN", "variables": {"a": 5}}).json()
    assert held["status"] == "PRE_APPROVED"
    assert_error(book.api.delete(f"{book.url}/instruments/{coin['id']}"), 422, "0012")
    book.api.post(f"{book.url}/transactions/{held['id']}/cancel")
    assert book.api.delete(f"{book.url}/instruments/{coin['id']}").status_code == 204


def test_it_refuses_to_revert_into_a_deleted_instrument(book):
    text = (
        "(transaction-template v1 (chart-of-accounts-group-name G) (code MOVE_COIN)"
        " (send COIN $a|0 (source (from $from :amount COIN $a|0)))"
        " (distribute (to $to :amount COIN $a|0)))"
    )
    coin = book.api.post(
        f"{book.url}/instruments", {"name": "Coin", "type": "crypto", "code": "COIN"}
    ).json()
    book.api.post(f"{book.url}/accounts", {"alias": "@coins", "assetCode": "COIN"})
    book.post_template(text)
    move = {"transactionTypeCode": "MOVE_COIN"}
    book.post({**move, "variables": {"a": 5, "from": "@external/COIN", "to": "@coins"}})
    back = book.post({**move, "variables": {"a": 5, "from": "@coins", "to": "@external/COIN"}})
    assert book.api.delete(f"{book.url}/instruments/{coin['id']}").status_code == 204
    assert_error(book.api.post(f"{book.url}/transactions/{back.json()['id']}/revert"), 422, "0034")


@pytest.mark.parametrize("raw", ["²", "9" * 5000, "٣"])
def test_it_answers_odd_digits_with_400_not_500(book, raw):
    assert_error(book.api.get(f"{book.url}/transactions", {"limit": raw}), 400, "0082")
    assert_error(
        book.api.post(f"{book.url}/charts?limit={raw}", {"type": "totalAmountByAsset"}), 400, "0082"
    )
    body = {"transactionTypeCode": "FUND", "variables": {"amount": 1, "account": "@alice"}}
    assert_error(book.post(body, HTTP_TOLERANCE=raw), 400, "0047")


def test_an_atomic_batch_names_its_lowest_refused_index(book):
    book.fund("@alice", 1_000)
    items = [pay(10, destination="@nobody"), {"transactionTypeCode": "NOPE", "variables": {}}]
    body = assert_error(post_batch(book, items), 422, "0085")
    assert body["fields"]["index"] == "0"


def test_a_batch_key_may_not_also_be_an_items_key(book):
    items = [fund("@alice", 1, idempotencyKey="same")]
    assert_error(post_batch(book, items, HTTP_IDEMPOTENCYKEY="same"), 422, "0084")
    assert not Transaction.objects.exists()


def test_it_posts_nothing_into_a_deleted_ledger(book):
    assert book.api.delete(book.url).status_code == 204
    body = {"transactionTypeCode": "FUND", "variables": {"amount": 1, "account": "@alice"}}
    assert_error(book.post(body), 422, "0008")
    assert_error(post_batch(book, [body]), 422, "0008")
