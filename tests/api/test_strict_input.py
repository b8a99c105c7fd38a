"""A string field takes a JSON string and nothing else: a number or a boolean where the
contract says string is 400 0047 naming the field, in every body (``InputSerializer``), at any
depth (a nested body, a list's items), and on the posting path."""

from __future__ import annotations

from typing import Any

import pytest

from organizations.models import Organization
from tests.conftest import Api, assert_error
from tests.transactions.conftest import Book, make_book
from transactions.models import Transaction


@pytest.fixture
def book(api: Api, ledger_url: str) -> Book:
    return make_book(api, ledger_url)


def refused(response: Any, field: str) -> None:
    body = assert_error(response, 400, "0047")
    assert field in body["fields"], body


@pytest.mark.parametrize("value", [5, 5.5, True, False, 0])
def test_an_organization_refuses_a_number_or_a_boolean_for_a_string(api, value):
    body = {"legalName": value, "legalDocument": "12345678"}
    refused(api.post("/v1/organizations", body), "legalName")
    body = {"legalName": "Acme", "legalDocument": value}
    refused(api.post("/v1/organizations", body), "legalDocument")
    assert not Organization.objects.exists()


def test_a_nested_body_names_the_field_inside_it(api):
    body = {"legalName": "Acme", "legalDocument": "1", "address": {"line1": 12, "country": "BR"}}
    refused(api.post("/v1/organizations", body), "address.line1")
    made = api.post("/v1/organizations", {"legalName": "Acme", "legalDocument": "1"}).json()
    url = f"/v1/organizations/{made['id']}"
    refused(api.patch(url, {"address": {"country": 76}}), "address.country")
    refused(api.patch(url, {"doingBusinessAs": 7}), "doingBusinessAs")
    refused(api.patch(url, {"parentOrganizationId": 1}), "parentOrganizationId")
    assert api.get(url).json()["doingBusinessAs"] is None


def test_the_resources_of_a_ledger_refuse_numbers_for_strings(api, organization, ledger_url):
    refused(api.post(f"/v1/organizations/{organization['id']}/ledgers", {"name": 1}), "name")
    instrument = {"name": "Dollar", "type": "currency", "code": 840}
    refused(api.post(f"{ledger_url}/instruments", instrument), "code")
    refused(api.post(f"{ledger_url}/portfolios", {"name": "P", "entityId": 9}), "entityId")
    refused(api.post(f"{ledger_url}/products", {"name": False}), "name")
    api.post(f"{ledger_url}/instruments", {"name": "Dollar", "type": "currency", "code": "USD"})
    api.post(f"{ledger_url}/instruments", {"name": "Euro", "type": "currency", "code": "EUR"})
    refused(api.post(f"{ledger_url}/accounts", {"assetCode": "USD", "name": 3}), "name")
    refused(api.post(f"{ledger_url}/accounts", {"assetCode": "USD", "alias": 3}), "alias")
    rate = {"baseAssetCode": "USD", "counterAssetCode": "EUR", "amount": 9, "scale": 1}
    refused(api.post(f"{ledger_url}/asset-rates", {**rate, "source": 1}), "source")
    refused(api.post(f"{ledger_url}/asset-rates", {**rate, "baseAssetCode": True}), "baseAssetCode")
    assert api.post(f"{ledger_url}/asset-rates", {**rate, "source": "1"}).status_code == 201


def test_a_webhook_refuses_numbers_for_its_description_and_event_types(api, organization):
    url = f"/v1/organizations/{organization['id']}/webhooks"
    body = {"url": "https://hooks.example.com/in", "eventTypes": ["*"]}
    refused(api.post(url, {**body, "description": 0}), "description")
    refused(api.post(url, {**body, "eventTypes": ["*", 1]}), "eventTypes")
    refused(api.post(url, {**body, "url": 1}), "url")


def test_a_posting_refuses_numbers_and_booleans_for_strings(book):
    before = Transaction.objects.count()
    variables = {"amount": 1, "account": "@alice"}
    refused(book.post({"transactionTypeCode": 5, "variables": variables}), "transactionTypeCode")
    refused(book.post({"transactionTypeCode": True}), "transactionTypeCode")
    fund = {"transactionTypeCode": "FUND", "variables": variables}
    refused(book.post({**fund, "description": 0}), "description")
    # DRF's UUIDField would take a number, or true, as the id 00000000-...-0001.
    refused(book.post({**fund, "parentTransactionId": True}), "parentTransactionId")
    refused(book.post({**fund, "parentTransactionId": 1}), "parentTransactionId")
    refused(book.post({**fund, "expiresAt": 1_700_000_000}), "expiresAt")
    assert Transaction.objects.count() == before
    assert book.post(fund).status_code == 201


def test_a_batch_item_refuses_a_number_for_its_code(book):
    items = [{"transactionTypeCode": 5}]
    response = book.api.post(f"{book.url}/transactions/batch", {"transactions": items})
    body = assert_error(response, 400, "0047")
    assert "transactionTypeCode" in str(body["fields"]), body


def test_strings_and_nulls_still_pass(api):
    body = {
        "legalName": "Acme",
        "legalDocument": "12345678",
        "doingBusinessAs": None,
        "address": {"line1": "Rua A, 1", "zipCode": "01000-000", "country": "BR"},
    }
    response = api.post("/v1/organizations", body)
    assert response.status_code == 201, response.content
    assert response.json()["legalName"] == "Acme"


def test_a_value_with_a_pattern_or_an_enum_is_taken_as_sent_never_trimmed(api, ledger_url):
    """The schema's pattern or enum holds for the value as sent: a space around an instrument's
    code or type, an account's asset, a rate's codes is refused, where
    trimming it first would accept what the schema calls invalid."""
    created = api.post(
        f"{ledger_url}/instruments", {"name": "R", "type": "currency", "code": "BRL"}
    )
    assert created.status_code == 201, created.content
    api.post(f"{ledger_url}/instruments", {"name": "G", "type": "commodity", "code": "XAU"})
    refusals = [
        api.post(f"{ledger_url}/instruments", {"name": "E", "type": "currency", "code": " EUR"}),
        api.post(f"{ledger_url}/instruments", {"name": "E", "type": " currency", "code": "EUR"}),
        api.post(f"{ledger_url}/accounts", {"assetCode": "BRL ", "alias": "@spaced"}),
        api.post(
            f"{ledger_url}/asset-rates",
            {"baseAssetCode": " BRL", "counterAssetCode": "XAU", "amount": 5, "scale": 2},
        ),
    ]
    assert [r.status_code for r in refusals] == [400, 400, 422, 422], [r.content for r in refusals]
    assert "@spaced" not in [a["alias"] for a in api.get(f"{ledger_url}/accounts").json()]
    # And a value the pattern allows is kept as sent: ``external `` is not ``external``.
    spaced = api.post(f"{ledger_url}/accounts", {"assetCode": "BRL", "type": "external "})
    assert spaced.status_code == 201 and spaced.json()["type"] == "external ", spaced.content
