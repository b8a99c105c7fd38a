"""An empty date or id in a query (``?at=``, ``?ledgerId=``) is a malformed value, not an
absent one: refused with the code a malformed value gets (0077 for dates, 0082 for ids), on
every endpoint that reads such a parameter (``ledgerproject.api.filters.refuse_empty_values``,
run for every scoped view)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ledgerproject.api.filters import DATE_PARAMETERS, ID_PARAMETERS
from tests.conftest import Api, assert_error
from tests.transactions.conftest import Book, make_book


@pytest.fixture
def book(api: Api, ledger_url: str) -> Book:
    return make_book(api, ledger_url)


def same_refusal(api: Api, url: str, name: str, bad: str, code: str) -> None:
    """``name=bad`` and ``name=`` get the same code, naming the parameter."""
    for value in (bad, ""):
        body = assert_error(api.get(url, {name: value}), 400, code)
        assert name in body["fields"], (value, body)


def test_an_empty_point_in_time_is_refused(book):
    url = f"{book.url}/accounts/{book.accounts['@alice']['id']}/balance"
    same_refusal(book.api, url, "at", "xyz", "0077")
    assert book.api.get(url).status_code == 200


@pytest.mark.parametrize("name", ["beginDate", "endDate"])
def test_empty_dates_of_the_event_lists_are_refused(api, ledger_url, name):
    organization_url = ledger_url.split("/ledgers/")[0]
    for url in (f"{organization_url}/events", f"{ledger_url}/events"):
        same_refusal(api, url, name, "xyz", "0077")
        assert api.get(url).status_code == 200


@pytest.mark.parametrize(
    "name, code", [("beginDate", "0077"), ("endDate", "0077"), ("parentTransactionId", "0082")]
)
def test_empty_filters_of_the_transaction_lists_are_refused(book, name, code):
    account = book.accounts["@alice"]["id"]
    for url in (f"{book.url}/transactions", f"{book.url}/accounts/{account}/transactions"):
        same_refusal(book.api, url, name, "xyz", code)
        assert book.api.get(url).status_code == 200


@pytest.mark.parametrize(
    "path, name",
    [
        ("/products", "ledgerId"),
        ("/accounts", "productId"),
        ("/accounts", "portfolioId"),
        ("/balance-monitors", "accountId"),
    ],
)
def test_empty_ids_of_the_resource_lists_are_refused(api, ledger_url, path, name):
    same_refusal(api, f"{ledger_url}{path}", name, "xyz", "0082")
    assert api.get(f"{ledger_url}{path}").status_code == 200


def _typed(schema: dict[str, Any]) -> str | None:
    if schema.get("format") == "uuid":
        return "id"
    formats = {part.get("format") for part in schema.get("anyOf", [])} | {schema.get("format")}
    return "date" if formats & {"date", "date-time"} else None


def test_every_date_or_id_query_parameter_of_the_schema_is_known(anon, db):
    """A parameter the schema says is a date or an id is one that an empty value is refused for:
    a new one must join ``DATE_PARAMETERS`` or ``ID_PARAMETERS``."""
    schema = json.loads(anon.get("/v1/openapi.json").content)
    found: dict[str, set[str]] = {"date": set(), "id": set()}
    for item in schema["paths"].values():
        for operation in item.values():
            for parameter in operation.get("parameters", []):
                kind = _typed(parameter.get("schema", {}))
                if parameter["in"] == "query" and kind is not None:
                    found[kind].add(parameter["name"])
    assert found["date"] == DATE_PARAMETERS
    assert found["id"] == ID_PARAMETERS


def test_a_switch_is_true_or_false_and_a_misspelt_dry_run_posts_nothing(book):
    posted = book.api.get(f"{book.url}/transactions").json()
    body = {"transactionTypeCode": "FUND", "variables": {"amount": 1, "account": "@alice"}}
    for value in ("", "yes", "ture"):
        refused = assert_error(book.api.post(f"{book.url}/transactions?dryRun={value}", body),
                               400, "0082")  # fmt: skip
        assert "dryRun" in refused["fields"]
    assert book.api.get(f"{book.url}/transactions").json() == posted  # nothing was posted
    for name, url in (("nonZero", f"{book.url}/balances"), ("deleted", f"{book.url}/accounts")):
        for value in ("", "maybe"):
            assert "fields" in assert_error(book.api.get(url, {name: value}), 400, "0082")
        assert book.api.get(url, {name: "true"}).status_code == 200


@pytest.mark.parametrize("name", ["limit", "sort_order"])
def test_an_empty_limit_or_order_is_refused(api, ledger_url, name):
    body = assert_error(api.get(f"{ledger_url}/accounts", {name: ""}), 400, "0082")
    assert name in body["fields"]


def test_a_commit_body_must_be_an_object(book):
    book.fund("@alice", 1_000)
    variables = {"amount": 100, "fee": 1, "source": "@alice", "destination": "@bob"}
    held = book.post({"transactionTypeCode": "PAYMENT_HELD", "variables": variables})
    assert held.status_code == 201, held.content
    url = f"{book.url}/transactions/{held.json()['id']}/commit"
    assert_error(book.api.post(url, "null", content_type="application/json"), 400, "0047")
    assert book.api.post(url).status_code == 200  # no body: commit it all
