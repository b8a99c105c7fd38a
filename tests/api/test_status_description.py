"""``status.description`` is null or a string of 1 to 256 characters (the schema's
``minLength: 1``): an empty one is 400 0047 wherever a status is taken, on create and on PATCH,
and nothing is written."""

from __future__ import annotations

import pytest

from tests.conftest import assert_error

EMPTY = {"code": "ACTIVE", "description": ""}


@pytest.fixture
def usd(api, ledger_url):
    api.post(f"{ledger_url}/instruments", {"name": "Dollar", "type": "currency", "code": "USD"})
    api.post(f"{ledger_url}/instruments", {"name": "Euro", "type": "currency", "code": "EUR"})


def _creates(organization, ledger_url):
    org_url = f"/v1/organizations/{organization['id']}"
    rate = {"baseAssetCode": "USD", "counterAssetCode": "EUR", "amount": 9, "scale": 1}
    return [
        ("/v1/organizations", {"legalName": "Sub", "legalDocument": "9"}),
        (f"{org_url}/ledgers", {"name": "Other"}),
        (f"{ledger_url}/instruments", {"name": "Gold", "type": "commodity", "code": "XAU"}),
        (f"{ledger_url}/portfolios", {"name": "Retail"}),
        (f"{ledger_url}/products", {"name": "Gold"}),
        (f"{ledger_url}/accounts", {"assetCode": "USD", "alias": "@carol"}),
        (f"{ledger_url}/asset-rates", rate),
    ]


def test_every_create_refuses_an_empty_status_description(api, organization, ledger_url, usd):
    for url, body in _creates(organization, ledger_url):
        before = len(api.get(url).json())
        response = api.post(url, {**body, "status": EMPTY})
        assert "status" in assert_error(response, 400, "0047")["fields"], url
        assert len(api.get(url).json()) == before, url
        made = api.post(url, {**body, "status": {"code": "ACTIVE", "description": "x"}})
        assert made.status_code == 201, (url, made.content)
        assert made.json()["status"] == {"code": "ACTIVE", "description": "x"}


def test_every_patch_refuses_an_empty_status_description(api, organization, ledger_url, usd):
    for url, body in _creates(organization, ledger_url):
        made = api.post(url, body).json()
        item = f"{url}/{made['id']}"
        assert "status" in assert_error(api.patch(item, {"status": EMPTY}), 400, "0047")["fields"]
        assert api.get(item).json()["status"] == {"code": "ACTIVE", "description": None}
        cleared = api.patch(item, {"status": {"code": "ACTIVE", "description": None}})
        assert cleared.status_code == 200, (item, cleared.content)
