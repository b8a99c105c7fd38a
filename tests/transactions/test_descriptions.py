"""Descriptions through the API (docs/TEMPLATES.md, Descriptions): an amount variable in a
template's description reads as money at the template's scale, and a reversal, a cancellation
and a partial commit each say what they are instead of repeating the original's text."""

from __future__ import annotations

import pytest

from tests.transactions.conftest import Book

MOVE = """
(transaction-template v1
  (chart-of-accounts-group-name PAYMENTS)
  (code TRANSFER)
  (description "Move $amount from $source to $destination")
  (send BRL $amount|2
    (source (from $source :amount BRL $amount|2)))
  (distribute
    (distribute :remaining (to $destination :remaining))))
"""

# Scale 3 and scale 0, a literal beside a variable, and no top-level description.
FINE = """
(transaction-template v1
  (chart-of-accounts-group-name G)
  (code FINE)
  (send BRL $amount+250|3
    (source (from $source :amount BRL $amount+250|3 (description "$amount plus 250 from $source"))))
  (distribute (to @bob :amount BRL $amount+250|3)))
"""
WHOLE = """
(transaction-template v1
  (chart-of-accounts-group-name G)
  (code WHOLE)
  (description "$amount whole")
  (send BRL $amount|0 (source (from @alice :amount BRL $amount|0)))
  (distribute (to @bob :amount BRL $amount|0)))
"""


def _move(book: Book, amount: int, source: str, destination: str, **body: object) -> dict:
    variables = {"amount": amount, "source": source, "destination": destination}
    response = book.post({"transactionTypeCode": "TRANSFER", "variables": variables, **body})
    assert response.status_code == 201, response.content
    return response.json()


@pytest.fixture
def moves(book: Book) -> Book:
    book.post_template(MOVE)
    return book


def test_an_amount_variable_reads_as_money_at_the_template_scale(moves):
    tx = _move(moves, 10_000, "@external/BRL", "@alice")
    assert tx["description"] == "Move 100.00 BRL from @external/BRL to @alice"
    assert _move(moves, 5, "@alice", "@bob")["description"] == "Move 0.05 BRL from @alice to @bob"
    read = moves.api.get(f"{moves.url}/transactions/{tx['id']}").json()
    assert read["description"] == "Move 100.00 BRL from @external/BRL to @alice"


def test_other_scales_and_operation_descriptions_read_as_money_too(moves):
    moves.fund("@alice", 10_000)
    moves.post_template(FINE)
    moves.post_template(WHOLE)
    fine = moves.post(
        {"transactionTypeCode": "FINE", "variables": {"amount": 1_000, "source": "@alice"}}
    )
    assert fine.status_code == 201, fine.content
    [debit] = [op for op in fine.json()["operations"] if op["type"] == "DEBIT"]
    assert debit["description"] == "1.000 BRL plus 250 from @alice"
    assert fine.json()["description"] is None
    whole = moves.post({"transactionTypeCode": "WHOLE", "variables": {"amount": "7"}})
    assert whole.status_code == 201, whole.content
    assert whole.json()["description"] == "7 BRL whole"


def test_a_description_sent_with_the_request_is_kept_as_written(moves):
    tx = _move(moves, 100, "@external/BRL", "@alice", description="Top-up $amount")
    assert tx["description"] == "Top-up $amount"


def test_a_reversal_says_what_it_reverts(moves):
    moves.fund("@alice", 5_000)
    tx = _move(moves, 2_500, "@alice", "@bob")
    response = moves.api.post(f"{moves.url}/transactions/{tx['id']}/revert")
    assert response.status_code == 201, response.content
    assert response.json()["description"] == "Reversal of Move 25.00 BRL from @alice to @bob"
    original = moves.api.get(f"{moves.url}/transactions/{tx['id']}").json()
    assert original["description"] == "Move 25.00 BRL from @alice to @bob"


def test_a_reversal_of_a_transaction_without_description_names_it(moves):
    moves.post_template(WHOLE.replace('(description "$amount whole")', ""))
    moves.fund("@alice", 5_000)
    tx = moves.post({"transactionTypeCode": "WHOLE", "variables": {"amount": 1}}).json()
    assert tx["description"] is None
    reversal = moves.api.post(f"{moves.url}/transactions/{tx['id']}/revert").json()
    assert reversal["description"] == f"Reversal of transaction {tx['id']}"


def test_a_cancellation_says_what_it_cancels(book):
    book.fund("@alice", 5_000)
    variables = {"amount": 1_000, "fee": 50, "source": "@alice", "destination": "@bob"}
    held = book.post({"transactionTypeCode": "PAYMENT_HELD", "variables": variables}).json()
    response = book.api.post(f"{book.url}/transactions/{held['id']}/cancel")
    assert response.status_code == 201, response.content
    assert response.json()["description"] == "Cancellation of Held payment"


def test_a_partial_commit_names_the_amount_committed(book):
    book.fund("@alice", 5_000)
    held = book.pay(1_000, 0, pending=True).json()
    assert held["description"] == "Payment with fee"
    url = f"{book.url}/transactions/{held['id']}"
    response = book.api.post(f"{url}/commit", {"amount": 300})
    assert response.status_code == 200, response.content
    said = "Partial commit of 3.00 BRL of 10.00 BRL: Payment with fee"
    assert response.json()["description"] == said
    assert book.api.get(url).json()["description"] == said
    reversal = book.api.post(f"{url}/revert").json()
    assert reversal["description"] == f"Reversal of {said}"


def test_a_full_commit_keeps_the_description(book):
    book.fund("@alice", 5_000)
    held = book.pay(1_000, 0, pending=True).json()
    response = book.api.post(f"{book.url}/transactions/{held['id']}/commit", {"amount": 1_000})
    assert response.status_code == 200, response.content
    assert response.json()["description"] == "Payment with fee"
