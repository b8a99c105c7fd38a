"""Pending, commit, revert and cancel (docs/TRANSACTIONS.md, States)."""

from __future__ import annotations

from tests.conftest import assert_error
from transactions.models import Transaction


def _held(book, amount=1_000, fee=50):
    variables = {"amount": amount, "fee": fee, "source": "@alice", "destination": "@bob"}
    return book.post({"transactionTypeCode": "PAYMENT_HELD", "variables": variables})


def test_it_holds_then_commits(book):
    book.fund("@alice", 5_000)
    response = _held(book)
    assert response.status_code == 201
    tx = response.json()
    assert tx["status"] == "PRE_APPROVED"
    assert [(op["accountAlias"], op["type"]) for op in tx["operations"]] == [("@alice", "DEBIT")]
    assert tx["operations"][0]["balanceAfter"] == {"available": 3_950, "onHold": 1_050, "scale": 2}
    assert book.balance("@alice") == {"available": 3_950, "onHold": 1_050, "scale": 2}
    assert book.available("@bob") == 0

    committed = book.api.post(f"{book.url}/transactions/{tx['id']}/commit")
    assert committed.status_code == 200
    body = committed.json()
    assert body["status"] == "SENT" and body["id"] == tx["id"]
    assert len(body["operations"]) == 4
    assert book.balance("@alice") == {"available": 3_950, "onHold": 0, "scale": 2}
    assert book.available("@bob") == 1_000
    assert book.available("@fees/platform") == 50
    assert_error(book.api.post(f"{book.url}/transactions/{tx['id']}/commit"), 422, "0099")


def test_it_takes_pending_from_the_body(book):
    book.fund("@alice", 5_000)
    tx = book.pay(10, 1, pending=True).json()
    assert tx["status"] == "PRE_APPROVED"
    tx = book.post(
        {
            "transactionTypeCode": "PAYMENT_HELD",
            "pending": False,
            "variables": {"amount": 1, "fee": 0, "source": "@alice", "destination": "@bob"},
        }
    ).json()
    assert tx["status"] == "SENT"


def test_it_refuses_to_hold_more_than_is_available(book):
    book.fund("@alice", 100)
    assert_error(_held(book, 100, 1), 422, "0018")


def test_it_reverts_a_sent_transaction(book):
    book.fund("@alice", 5_000)
    tx = book.pay(1_000, 50).json()
    response = book.api.post(f"{book.url}/transactions/{tx['id']}/revert")
    assert response.status_code == 201
    reversal = response.json()
    assert reversal["status"] == "SENT"
    assert reversal["parentTransactionId"] == tx["id"]
    assert reversal["source"] == tx["destination"] and reversal["destination"] == tx["source"]
    original = {(op["accountAlias"], op["type"], op["amount"]["amount"]) for op in tx["operations"]}
    flipped = {
        (op["accountAlias"], "CREDIT" if op["type"] == "DEBIT" else "DEBIT", op["amount"]["amount"])
        for op in reversal["operations"]
    }
    assert original == flipped
    assert book.available("@alice") == 5_000
    assert book.available("@bob") == 0
    assert book.available("@fees/platform") == 0
    assert_error(book.api.post(f"{book.url}/transactions/{tx['id']}/revert"), 422, "0087")
    assert_error(book.api.post(f"{book.url}/transactions/{reversal['id']}/revert"), 422, "0088")


def test_it_refuses_a_revert_that_would_overdraw(book):
    book.fund("@alice", 5_000)
    tx = book.pay(1_000, 0).json()
    book.pay(1_000, 0, source="@bob", destination="@alice")
    assert_error(book.api.post(f"{book.url}/transactions/{tx['id']}/revert"), 422, "0018")


def test_it_cancels_a_pending_transaction_by_revert_or_cancel(book):
    book.fund("@alice", 5_000)
    for action in ("revert", "cancel"):
        tx = _held(book).json()
        response = book.api.post(f"{book.url}/transactions/{tx['id']}/{action}")
        assert response.status_code == 201, response.content
        reversal = response.json()
        assert reversal["parentTransactionId"] == tx["id"]
        assert [(o["accountAlias"], o["type"]) for o in reversal["operations"]] == [
            ("@alice", "CREDIT")
        ]
        assert book.balance("@alice") == {"available": 5_000, "onHold": 0, "scale": 2}
        original = book.api.get(f"{book.url}/transactions/{tx['id']}").json()
        assert original["status"] == "CANCELED"
        assert_error(book.api.post(f"{book.url}/transactions/{tx['id']}/revert"), 422, "0099")
        assert_error(book.api.post(f"{book.url}/transactions/{tx['id']}/commit"), 422, "0099")


def test_it_refuses_to_cancel_a_sent_transaction(book):
    book.fund("@alice", 100)
    tx = book.pay(10, 0).json()
    assert_error(book.api.post(f"{book.url}/transactions/{tx['id']}/cancel"), 422, "0099")


def test_it_answers_404_for_unknown_transactions(book):
    for action in ("commit", "revert", "cancel"):
        assert_error(
            book.api.post(f"{book.url}/transactions/00000000-0000-0000-0000-000000000000/{action}"),
            404,
            "0007",
        )
    assert_error(book.api.get(f"{book.url}/transactions/nope"), 404, "0007")


def test_it_replays_statements_to_the_balance(book):
    book.fund("@alice", 5_000)
    book.pay(100, 5)
    held = _held(book, 200, 10).json()
    book.api.post(f"{book.url}/transactions/{held['id']}/commit")
    cancel = _held(book, 300, 0).json()
    book.api.post(f"{book.url}/transactions/{cancel['id']}/cancel")
    for alias in ("@alice", "@bob", "@fees/platform", "@external/BRL"):
        account = book.api.get(f"{book.url}/accounts", {"alias": alias}).json()[0]
        ops = book.api.get(f"{book.url}/accounts/{account['id']}/operations").json()
        available = on_hold = 0
        for previous, op in zip([None, *ops], ops, strict=False):
            if previous is not None:
                assert op["balance"] == previous["balanceAfter"]
            available, on_hold = op["balanceAfter"]["available"], op["balanceAfter"]["onHold"]
        assert (available, on_hold) == (
            account["balance"]["available"],
            account["balance"]["onHold"],
        )


def test_a_cancelled_transaction_is_stamped_with_its_cancellation_time(book):
    """What the cancellation's event says of the original (journal: docs/BOOKS.md) is what is
    stored: its updatedAt is the cancellation's own time, to the microsecond."""
    book.fund("@alice", 5_000)
    tx = _held(book).json()
    assert book.api.post(f"{book.url}/transactions/{tx['id']}/cancel").status_code == 201
    original = Transaction.objects.get(pk=tx["id"])
    cancellation = Transaction.objects.get(parent_id=tx["id"], is_reversal=True)
    assert original.status == "CANCELED"
    assert original.updated_at == cancellation.updated_at == cancellation.created_at
