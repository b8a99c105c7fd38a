"""Lists answer an unknown query parameter (``page`` above all) with 400 0082 naming
``cursor``, instead of ignoring it (a client paging by number would loop on page one)."""

from __future__ import annotations

import pytest

from tests.conftest import assert_error

LISTS = [
    "/instruments",
    "/asset-rates",
    "/instrument-rates",
    "/portfolios",
    "/products",
    "/accounts",
    "/transactions",
    "/transaction-templates",
]


@pytest.mark.parametrize("path", LISTS)
@pytest.mark.parametrize("param", ["page", "offset", "per_page", "limt"])
def test_a_list_refuses_an_unknown_parameter(api, ledger_url, path, param):
    body = assert_error(api.get(f"{ledger_url}{path}", {param: "2"}), 400, "0082")
    assert "cursor" in body["description"]
    assert param in body["fields"]


def test_the_organization_and_ledger_lists_refuse_page(api, organization):
    for url in ("/v1/organizations", f"/v1/organizations/{organization['id']}/ledgers"):
        assert "cursor" in assert_error(api.get(url, {"page": 1}), 400, "0082")["description"]


def test_account_lists_refuse_page(api, ledger_url):
    api.post(f"{ledger_url}/instruments", {"name": "Dollar", "type": "currency", "code": "USD"})
    [external] = api.get(f"{ledger_url}/accounts").json()
    for sub in ("transactions", "operations"):
        url = f"{ledger_url}/accounts/{external['id']}/{sub}"
        assert_error(api.get(url, {"page": 2}), 400, "0082")


@pytest.mark.parametrize(
    "query",
    [
        {"limit": 1, "cursor": ""},
        {"sort_order": "desc"},
        {"alias": "@x", "assetCode": "USD", "status": "ACTIVE", "deleted": "false"},
        {"metadata.key": "v", "metadata": "k:v"},
    ],
)
def test_known_parameters_still_work(api, ledger_url, query):
    assert api.get(f"{ledger_url}/accounts", query).status_code == 200
