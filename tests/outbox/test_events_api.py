"""The outbox through the API: every change writes one event, rendered as the API renders the
resource; ``GET .../events`` lists them in order with filters, a cursor and tenancy."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone

from outbox.events import CATALOGUE
from outbox.models import Event
from tests.conftest import Api, assert_error, make_token
from transactions import expiry
from transactions.models import Transaction

pytestmark = pytest.mark.django_db


def _events(api: Api, url: str, **params: Any) -> list[dict[str, Any]]:
    response = api.get(f"{url}/events", params)
    assert response.status_code == 200, response.content
    return response.json()


def _types(api: Api, url: str, **params: Any) -> list[str]:
    return [e["type"] for e in _events(api, url, **params)]


def test_it_records_each_resource_change_with_its_rendering(api, ledger_url):
    org_url = ledger_url.split("/ledgers/")[0]
    instrument = api.post(
        f"{ledger_url}/instruments", {"name": "Real", "type": "currency", "code": "BRL"}
    ).json()
    api.post(f"{ledger_url}/instruments", {"name": "Dollar", "type": "currency", "code": "USD"})
    account = api.post(f"{ledger_url}/accounts", {"alias": "@a", "assetCode": "BRL"}).json()
    patched = api.patch(f"{ledger_url}/accounts/{account['id']}", {"name": "A"}).json()
    assert api.delete(f"{ledger_url}/accounts/{account['id']}").status_code == 204
    portfolio = api.post(f"{ledger_url}/portfolios", {"name": "P"}).json()
    product = api.post(f"{ledger_url}/products", {"name": "Q"}).json()
    rate = api.post(f"{ledger_url}/instrument-rates", {"baseInstrumentCode": "BRL",
        "counterInstrumentCode": "USD", "amount": 5, "scale": 0}).json()  # fmt: skip
    events = _events(api, ledger_url)
    by_type = {e["type"]: e for e in events}
    # an instrument's external account is created with it, in its database transaction
    assert [e["type"] for e in events] == [
        "ledger.created", "account.created", "instrument.created", "account.created",
        "instrument.created", "account.created", "account.updated", "account.deleted",
        "portfolio.created", "product.created", "rate.created",
    ]  # fmt: skip
    by_type["instrument.created"] = events[2]
    assert by_type["instrument.created"]["data"] == instrument
    assert by_type["account.updated"]["data"] == patched
    assert by_type["account.deleted"]["data"]["deletedAt"] is not None
    assert by_type["portfolio.created"]["data"] == portfolio
    assert by_type["product.created"]["data"] == product
    assert by_type["rate.created"]["data"] == rate
    assert by_type["rate.created"]["resourceId"] == rate["id"]
    assert _types(api, org_url)[:2] == ["organization.created", "ledger.created"]
    assert len(_events(api, org_url)) == len(events) + 1  # the organization's own event


def test_it_records_postings_and_state_changes_as_answered(book):
    book.fund("@alice", 10_000)
    paid = book.pay(100, 5).json()
    held = book.post({"transactionTypeCode": "PAYMENT_HELD",
                      "variables": {"amount": 10, "fee": 0, "source": "@alice",
                                    "destination": "@bob"}}).json()  # fmt: skip
    committed = book.api.post(f"{book.url}/transactions/{held['id']}/commit").json()
    reverted = book.api.post(f"{book.url}/transactions/{paid['id']}/revert").json()
    held2 = book.post({"transactionTypeCode": "PAYMENT_HELD",
                       "variables": {"amount": 1, "fee": 0, "source": "@alice",
                                     "destination": "@bob"}}).json()  # fmt: skip
    canceled = book.api.post(f"{book.url}/transactions/{held2['id']}/cancel").json()
    tx_events = [e for e in _events(book.api, book.url) if e["type"].startswith("transaction.")]
    assert [e["type"] for e in tx_events] == [
        "transaction.posted", "transaction.posted", "transaction.posted",
        "transaction.committed", "transaction.reverted", "transaction.posted",
        "transaction.canceled",
    ]  # fmt: skip
    assert tx_events[1]["data"] == paid
    assert tx_events[3]["data"] == committed
    assert tx_events[4]["data"] == reverted
    assert tx_events[6]["data"] == canceled
    assert all(e["ledgerId"] == paid["ledgerId"] for e in tx_events)


def test_templates_record_events(book):
    assert _types(book.api, book.url, type="template.created") == ["template.created"] * 3


def test_a_refused_posting_writes_no_event(book):
    before = Event.objects.count()
    assert_error(book.pay(1_000_000, 0), 422, "0018")
    assert Event.objects.count() == before


def test_batches_write_one_event_per_posted_item(book):
    book.fund("@alice", 100)
    item = {
        "transactionTypeCode": "PAYMENT_WITH_FEE",
        "variables": {"amount": 10, "fee": 0, "source": "@alice", "destination": "@bob"},
    }
    too_much = {**item, "variables": {**item["variables"], "amount": 10_000}}  # fmt: skip
    posted = _types(book.api, book.url, type="transaction.posted")
    refused = book.api.post(f"{book.url}/transactions/batch", {"transactions": [item, too_much]})
    assert refused.status_code == 422, refused.content
    assert _types(book.api, book.url, type="transaction.posted") == posted
    mixed = book.api.post(
        f"{book.url}/transactions/batch", {"transactions": [item, too_much, item], "atomic": False}
    )
    assert mixed.status_code == 200, mixed.content
    assert len(_types(book.api, book.url, type="transaction.posted")) == len(posted) + 2


def test_it_pages_with_a_cursor_in_order(api, ledger_url):
    for code in ("AAA", "BBB", "CCC", "DDD"):
        api.post(f"{ledger_url}/instruments", {"name": code, "type": "commodity", "code": code})
    everything = _events(api, ledger_url)
    seen, cursor = [], None
    while True:
        params = {"limit": 3, **({"cursor": cursor} if cursor else {})}
        response = api.get(f"{ledger_url}/events", params)
        page = response.json()
        seen += page
        if "Link" not in response:
            break
        cursor = page[-1]["cursor"]
        assert f"cursor={cursor}" in response["Link"]
    assert [e["id"] for e in seen] == [e["id"] for e in everything]
    last = everything[-1]["cursor"]
    assert _events(api, ledger_url, cursor=last) == []
    desc = _events(api, ledger_url, sort_order="desc")
    assert [e["id"] for e in desc] == [e["id"] for e in reversed(everything)]


def test_it_filters_by_type_and_time(api, ledger_url):
    api.post(f"{ledger_url}/instruments", {"name": "Real", "type": "currency", "code": "BRL"})
    kinds = _types(api, ledger_url, type=["instrument.created", "ledger.created"])
    assert kinds == ["ledger.created", "instrument.created"]
    assert _events(api, ledger_url, beginDate="2999-01-01") == []
    assert len(_events(api, ledger_url, endDate="2999-01-01")) == len(_events(api, ledger_url))


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({"type": "nothing.happened"}, "0082"),
        ({"cursor": "not-a-cursor"}, "0082"),
        ({"cursor": "MTI"}, "0082"),
        ({"limit": "0"}, "0082"),
        ({"limit": "1001"}, "0080"),
        ({"sort_order": "up"}, "0082"),
        ({"beginDate": "yesterday"}, "0077"),
    ],
)
def test_it_refuses_bad_parameters(api, ledger_url, params, code):
    assert_error(api.get(f"{ledger_url}/events", params), 400, code)


def test_tenancy_and_read_only_tokens(api, ledger_url, read_only_api):
    assert read_only_api.get(f"{ledger_url}/events").status_code == 200
    other_org = api.post("/v1/organizations", {"legalName": "B", "legalDocument": "9"}).json()
    scoped = Api(make_token("scoped", organization_ids=[other_org["id"]]))
    assert_error(scoped.get(f"{ledger_url}/events"), 404, "0007")
    assert_error(scoped.get(ledger_url.split("/ledgers/")[0] + "/events"), 404, "0007")
    assert scoped.get(f"/v1/organizations/{other_org['id']}/events").status_code == 200


def test_the_catalogue_covers_every_resource():
    for noun in ("organization", "ledger", "instrument", "rate", "product", "portfolio",
                 "account", "template"):  # fmt: skip
        for action in ("created", "updated", "deleted"):
            assert f"{noun}.{action}" in CATALOGUE
    assert {"transaction.posted", "transaction.committed", "transaction.reverted",
            "transaction.canceled"} <= set(CATALOGUE)  # fmt: skip


def test_expiry_partial_commit_and_inline_postings_write_their_events(book):
    """An expired hold is canceled through the one cancel (``transaction.canceled``), a partial
    commit is a commit, and an inline posting is a posting: each writes its event."""
    book.fund("@alice", 10_000)
    variables = {"amount": 10, "fee": 0, "source": "@alice", "destination": "@bob"}
    body = {"transactionTypeCode": "PAYMENT_HELD", "variables": variables}
    expiring = book.post(body).json()
    Transaction.objects.filter(pk=expiring["id"]).update(expires_at=timezone.now())
    assert expiry.expire_due(limit=10) >= 1
    partial = book.post(body).json()
    committed = book.api.post(f"{book.url}/transactions/{partial['id']}/commit", {"amount": 4})
    assert committed.status_code == 200, committed.content
    inline = book.api.post(
        f"{book.url}/transactions/json",
        {"chartOfAccountsGroupName": "G", "send": {"asset": "BRL",
         "amount": {"terms": [{"literal": 3}], "scale": 2},
         "source": [{"account": {"alias": "@alice"}, "asset": "BRL",
                     "amount": {"terms": [{"literal": 3}], "scale": 2}}]},
         "distribute": {"to": [], "remaining": {"account": {"alias": "@bob"}}}},
    )  # fmt: skip
    assert inline.status_code == 201, inline.content
    tx_events = [e for e in _events(book.api, book.url) if e["type"].startswith("transaction.")]
    by_id = {(e["type"], e["data"]["id"]): e for e in tx_events}
    canceled = [e for e in tx_events if e["type"] == "transaction.canceled"]
    assert [e["data"]["parentTransactionId"] for e in canceled] == [expiring["id"]]
    assert by_id[("transaction.committed", partial["id"])]["data"] == committed.json()
    assert ("transaction.posted", inline.json()["id"]) in by_id
