"""A deleted ledger takes no write of any kind: postings, commits, reverts, cancels, and every
create, update or delete of its contents answer 422 0008 and change nothing. Reads go on."""

from __future__ import annotations

import pytest

from tests.conftest import assert_error
from tests.transactions.conftest import FUND
from transactions.models import Operation, Transaction


@pytest.fixture
def deleted(book):
    sent = book.fund("@alice", 1_000)
    held = book.post(
        {
            "transactionTypeCode": "PAYMENT_HELD",
            "variables": {"amount": 10, "fee": 1, "source": "@alice", "destination": "@bob"},
        }
    ).json()
    held_to_cancel = book.post(
        {
            "transactionTypeCode": "PAYMENT_HELD",
            "variables": {"amount": 5, "fee": 0, "source": "@alice", "destination": "@bob"},
        }
    ).json()
    instrument = book.api.get(f"{book.url}/instruments").json()[0]
    assert book.api.delete(book.url).status_code == 204
    return {"sent": sent, "held": held, "cancel": held_to_cancel, "instrument": instrument}


def test_it_refuses_commit_revert_and_cancel(book, deleted):
    before = (Transaction.objects.count(), Operation.objects.count())
    url = f"{book.url}/transactions"
    assert_error(book.api.post(f"{url}/{deleted['held']['id']}/commit"), 422, "0008")
    assert_error(book.api.post(f"{url}/{deleted['sent']['id']}/revert"), 422, "0008")
    assert_error(book.api.post(f"{url}/{deleted['cancel']['id']}/cancel"), 422, "0008")
    assert_error(
        book.post({"transactionTypeCode": "FUND", "variables": {"amount": 1, "account": "@bob"}}),
        422,
        "0008",
    )
    batch = {
        "transactions": [
            {"transactionTypeCode": "FUND", "variables": {"amount": 1, "account": "@bob"}}
        ]
    }
    assert_error(book.api.post(f"{url}/batch", batch), 422, "0008")
    assert (Transaction.objects.count(), Operation.objects.count()) == before
    assert book.api.get(f"{url}/{deleted['held']['id']}").json()["status"] == "PRE_APPROVED"


def test_it_refuses_every_write_of_its_contents(book, deleted):
    url = book.url
    text = FUND.replace("(code FUND)", "(code FUND2)")
    assert_error(
        book.api.post(f"{url}/transaction-templates", text, content_type="text/plain"), 422, "0008"
    )
    assert_error(
        book.api.put(f"{url}/transaction-templates/FUND", FUND, content_type="text/plain"),
        422,
        "0008",
    )
    assert_error(book.api.delete(f"{url}/transaction-templates/FUND"), 422, "0008")
    alice = book.accounts["@alice"]["id"]
    assert_error(book.api.patch(f"{url}/accounts/{alice}", {"name": "x"}), 422, "0008")
    assert_error(book.api.post(f"{url}/accounts", {"assetCode": "BRL", "name": "n"}), 422, "0008")
    instrument = deleted["instrument"]["id"]
    assert_error(book.api.patch(f"{url}/instruments/{instrument}", {"name": "x"}), 422, "0008")
    assert_error(
        book.api.post(f"{url}/instruments", {"name": "D", "type": "currency", "code": "USD"}),
        422,
        "0008",
    )
    assert_error(book.api.post(f"{url}/portfolios", {"name": "p"}), 422, "0008")
    assert_error(book.api.post(f"{url}/products", {"name": "p"}), 422, "0008")
    assert_error(book.api.patch(url, {"name": "renamed"}), 400, "0013")
    assert book.api.get(f"{url}/accounts/{alice}").json()["name"] == "@alice"
    assert book.api.get(f"{url}/transaction-templates/FUND").status_code == 200
