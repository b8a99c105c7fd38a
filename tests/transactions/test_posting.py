"""Posting from templates: the specification's fee-and-remaining example, exact amounts, and
every refusal of docs/TRANSACTIONS.md."""

from __future__ import annotations

import re

from tests.conftest import assert_error
from transactions.models import Operation, Transaction

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+0000$")


def test_it_posts_the_payment_with_fee_example(book):
    book.fund("@alice", 10_000)
    response = book.pay(1_000, 50)
    assert response.status_code == 201, response.content
    tx = response.json()
    assert tx["status"] == "SENT"
    assert tx["type"] == "PAYMENT_WITH_FEE"
    assert tx["amount"] == {"amount": 1_050, "scale": 2}
    assert tx["assetCode"] == "BRL"
    assert tx["chartOfAccountsGroupName"] == "PAG_CONTAS_CODE_1"
    assert tx["source"] == ["@alice"] and tx["destination"] == ["@fees/platform", "@bob"]
    assert tx["description"] == "Payment with fee"
    assert tx["metadata"] == {"channel": "app", "origin": "template"}
    assert tx["parentTransactionId"] is None
    assert TIMESTAMP.match(tx["createdAt"])
    ops = {(op["accountAlias"], op["type"]): op for op in tx["operations"]}
    assert set(ops) == {("@alice", "DEBIT"), ("@fees/platform", "CREDIT"), ("@bob", "CREDIT")}
    alice = ops[("@alice", "DEBIT")]
    assert alice["amount"] == {"amount": 1_050, "scale": 2}
    assert alice["balance"] == {"available": 10_000, "onHold": 0, "scale": 2}
    assert alice["balanceAfter"] == {"available": 8_950, "onHold": 0, "scale": 2}
    assert alice["description"] == "Pay 10.00 BRL plus fee 0.50 BRL"
    assert alice["chartOfAccounts"] == "PAYMENT_DEBIT"
    assert alice["transactionId"] == tx["id"]
    assert alice["accountId"] == book.accounts["@alice"]["id"]
    assert ops[("@bob", "CREDIT")]["balanceAfter"]["available"] == 1_000
    assert ops[("@bob", "CREDIT")]["description"] == ""
    assert ops[("@fees/platform", "CREDIT")]["balanceAfter"]["available"] == 50
    assert book.available("@alice") == 8_950
    assert book.available("@bob") == 1_000
    assert book.available("@fees/platform") == 50
    assert book.available("@external/BRL") == -10_000


def test_it_drops_zero_legs(book):
    book.fund("@alice", 500)
    tx = book.pay(100, 0).json()
    assert {op["accountAlias"] for op in tx["operations"]} == {"@alice", "@bob"}


def test_it_merges_metadata_and_overrides_the_description(book):
    book.fund("@alice", 500)
    tx = book.pay(100, 1, metadata={"origin": "request", "n": 1}, description="Mine").json()
    assert tx["metadata"] == {"channel": "app", "origin": "request", "n": 1}
    assert tx["description"] == "Mine"


def test_it_accepts_variables_with_a_dollar_and_digit_strings(book):
    book.fund("@alice", 500)
    response = book.post(
        {
            "transactionTypeCode": "PAYMENT_WITH_FEE",
            "variables": {"$amount": "100", "$fee": 2, "source": "@alice", "destination": "@bob"},
        }
    )
    assert response.status_code == 201, response.content
    assert response.json()["amount"]["amount"] == 102


def test_it_refuses_insufficient_funds_and_writes_nothing(book):
    book.fund("@alice", 100)
    before = (Transaction.objects.count(), Operation.objects.count())
    assert_error(book.pay(100, 1), 422, "0018")
    assert (Transaction.objects.count(), Operation.objects.count()) == before
    assert book.available("@alice") == 100
    assert book.available("@fees/platform") == 0


def test_it_refuses_bad_variables(book):
    base = {"transactionTypeCode": "PAYMENT_WITH_FEE"}
    full = {"amount": 1, "fee": 1, "source": "@alice", "destination": "@bob"}
    missing = {k: v for k, v in full.items() if k != "fee"}
    assert_error(book.post({**base, "variables": missing}), 400, "0009")
    assert_error(book.post({**base, "variables": {**full, "tip": 1}}), 400, "0053")
    assert_error(book.post({**base, "variables": {**full, "amount": -1}}), 400, "0047")
    assert_error(book.post({**base, "variables": {**full, "amount": 1.5}}), 400, "0047")
    assert_error(book.post({**base, "variables": {**full, "amount": "1.5"}}), 400, "0047")
    assert_error(book.post({**base, "variables": {**full, "source": "alice"}}), 400, "0047")
    assert_error(book.post({**base, "variables": "x"}), 400, "0047")


def test_it_refuses_bad_bodies(book):
    assert_error(book.post({"variables": {}}), 400, "0009")
    assert_error(book.post({"transactionTypeCode": "FUND", "extra": 1}), 400, "0053")
    assert_error(book.post({"transactionTypeCode": "NOPE"}), 404, "0007")
    body = {"transactionTypeCode": "FUND", "variables": {"amount": 1, "account": "@alice"}}
    assert_error(book.post({**body, "pending": "yes"}), 400, "0047")
    assert_error(book.post({**body, "metadata": {"a": {"b": 1}}}), 400, "0067")


def test_it_refuses_unknown_aliases_and_wrong_assets(book):
    book.fund("@alice", 500)
    assert_error(book.pay(1, 1, destination="@nobody"), 422, "0085")
    book.api.post(f"{book.url}/instruments", {"name": "Dollar", "type": "currency", "code": "USD"})
    book.api.post(f"{book.url}/accounts", {"alias": "@usd", "assetCode": "USD"})
    assert_error(book.pay(1, 1, destination="@usd"), 422, "0030")


def test_it_refuses_an_account_on_both_sides(book):
    book.fund("@alice", 500)
    assert_error(book.pay(1, 1, destination="@alice"), 422, "0090")


def test_it_refuses_value_mismatches(book):
    assert_error(book.pay(0, 0), 422, "0073")


def test_it_refuses_accounts_that_may_not_send_or_receive(book):
    book.fund("@alice", 500)
    book.api.patch(f"{book.url}/accounts/{book.accounts['@bob']['id']}", {"allowReceiving": False})
    assert_error(book.pay(1, 1), 422, "0024")
    book.api.patch(f"{book.url}/accounts/{book.accounts['@bob']['id']}", {"allowReceiving": True})
    book.api.patch(f"{book.url}/accounts/{book.accounts['@alice']['id']}", {"allowSending": False})
    assert_error(book.pay(1, 1), 422, "0024")


def test_it_refuses_blocked_accounts(book):
    book.fund("@alice", 500)
    book.api.patch(
        f"{book.url}/accounts/{book.accounts['@bob']['id']}",
        {"status": {"code": "BLOCKED", "description": None}},
    )
    assert_error(book.pay(1, 1), 422, "0024")


def test_it_refuses_a_deleted_instrument(book):
    instrument = book.api.post(
        f"{book.url}/instruments", {"name": "Coin", "type": "crypto", "code": "COIN"}
    ).json()
    text = (
        "(transaction-template v1 (chart-of-accounts-group-name G) (code COINS)"
        " (send COIN $a|0 (source (from @external/COIN :amount COIN $a|0)))"
        " (distribute (to $to :amount COIN $a|0)))"
    )
    book.post_template(text)
    book.api.post(f"{book.url}/accounts", {"alias": "@coins", "assetCode": "COIN"})
    assert book.api.delete(f"{book.url}/instruments/{instrument['id']}").status_code == 204
    assert_error(
        book.post({"transactionTypeCode": "COINS", "variables": {"a": 1, "to": "@coins"}}),
        422,
        "0034",
    )


def test_it_checks_the_parent_transaction(book):
    first = book.fund("@alice", 10)
    body = {"transactionTypeCode": "FUND", "variables": {"amount": 1, "account": "@alice"}}
    ok = book.post({**body, "parentTransactionId": first["id"]})
    assert ok.status_code == 201 and ok.json()["parentTransactionId"] == first["id"]
    assert_error(
        book.post({**body, "parentTransactionId": "00000000-0000-0000-0000-000000000000"}),
        422,
        "0021",
    )


def test_it_rescales_balances_exactly(book):
    text = (
        "(transaction-template v1 (chart-of-accounts-group-name G) (code MICRO)"
        " (send BRL $a|4 (source (from @external/BRL :amount BRL $a|4)))"
        " (distribute (to $to :amount BRL $a|4)))"
    )
    book.post_template(text)
    book.fund("@alice", 150)
    tx = book.post({"transactionTypeCode": "MICRO", "variables": {"a": 1, "to": "@alice"}}).json()
    op = tx["operations"][1]
    assert op["balance"] == {"available": 150, "onHold": 0, "scale": 2}
    assert op["balanceAfter"] == {"available": 15_001, "onHold": 0, "scale": 4}
    book.pay(100, 0)
    assert book.balance("@alice") == {"available": 5_001, "onHold": 0, "scale": 4}


def test_it_dry_runs_without_writing(book):
    book.fund("@alice", 2_000)
    before = (Transaction.objects.count(), Operation.objects.count())
    response = book.api.post(
        f"{book.url}/transactions?dryRun=true",
        {
            "transactionTypeCode": "PAYMENT_WITH_FEE",
            "variables": {"amount": 1_000, "fee": 50, "source": "@alice", "destination": "@bob"},
        },
    )
    assert response.status_code == 200
    assert response["Dry-Run"] == "true"
    body = response.json()
    assert body["status"] == "SENT" and body["dryRun"] is True
    assert len(body["operations"]) == 3
    assert (Transaction.objects.count(), Operation.objects.count()) == before
    assert book.available("@alice") == 2_000
    assert_error(
        book.api.post(
            f"{book.url}/transactions?dryRun=true",
            {
                "transactionTypeCode": "PAYMENT_WITH_FEE",
                "variables": {"amount": 5_000, "fee": 0, "source": "@alice", "destination": "@bob"},
            },
        ),
        422,
        "0018",
    )


def test_a_posting_is_stored_with_the_times_it_answered(book):
    """The answer (and the posting's event) and the stored rows agree to the microsecond: the
    write keeps the time the engine stamped, on every database."""
    book.fund("@alice", 5_000)
    answer = book.pay(100, 5).json()
    tx = Transaction.objects.get(pk=answer["id"])
    assert tx.updated_at == tx.created_at
    for op in Operation.objects.filter(transaction_id=tx.pk):
        assert op.updated_at == op.created_at == tx.created_at
