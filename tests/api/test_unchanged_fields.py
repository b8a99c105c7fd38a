"""A field sent back with the value it has is never an error, on every resource: a client may
PATCH what it read (the habit of clients that GET, edit, PATCH the whole object). A fixed field
with another value is still 400 0006."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import assert_error


def made(api: Any, url: str, body: dict[str, Any]) -> str:
    response = api.post(url, body)
    assert response.status_code == 201, response.content
    return f"{url}/{response.json()['id']}"


@pytest.fixture
def items(api, organization, ledger_url) -> dict[str, tuple[str, str, Any]]:
    """Each resource's URL, one fixed field and another value for it."""
    org_url = f"/v1/organizations/{organization['id']}"
    made(api, f"{ledger_url}/instruments", {"name": "Dollar", "type": "currency", "code": "USD"})
    made(api, f"{ledger_url}/instruments", {"name": "Gold", "type": "commodity", "code": "XAU"})
    return {
        "organization": (org_url, "legalDocument", "other"),
        "ledger": (ledger_url, "organizationId", "0190f0a0-0000-7000-8000-000000000000"),
        "instrument": (
            f"{ledger_url}/instruments/{api.get(f'{ledger_url}/instruments').json()[0]['id']}",
            "code",
            "EUR",
        ),
        "asset-rate": (
            made(
                api,
                f"{ledger_url}/asset-rates",
                {"baseAssetCode": "USD", "counterAssetCode": "XAU", "amount": 5, "scale": 2},
            ),
            "baseAssetCode",
            "XAU",
        ),
        "portfolio": (made(api, f"{ledger_url}/portfolios", {"name": "P"}), "ledgerId", "x"),
        "product": (made(api, f"{ledger_url}/products", {"name": "Q"}), "createdAt", "x"),
        "account": (
            made(api, f"{ledger_url}/accounts", {"assetCode": "USD"}),
            "assetCode",
            "XAU",
        ),
    }


RESOURCES = [
    "organization",
    "ledger",
    "instrument",
    "asset-rate",
    "portfolio",
    "product",
    "account",
]


@pytest.mark.parametrize("resource", RESOURCES)
def test_a_read_answer_patched_back_whole_is_accepted(api, items, resource):
    url, _, _ = items[resource]
    before = api.get(url).json()
    response = api.patch(url, before)
    assert response.status_code == 200, response.content
    after = response.json()
    assert {k: v for k, v in after.items() if k != "updatedAt"} == {
        k: v for k, v in before.items() if k != "updatedAt"
    }


@pytest.mark.parametrize("resource", RESOURCES)
def test_a_fixed_field_with_another_value_is_refused(api, items, resource):
    url, field, other = items[resource]
    body = {**api.get(url).json(), field: other}
    assert field in assert_error(api.patch(url, body), 400, "0006")["fields"]


def test_a_fixed_field_of_another_type_but_equal_in_python_is_refused(api, items):
    """``true`` is not ``1``: the comparison is of JSON values."""
    url, _, _ = items["account"]
    scale = api.get(url).json()["balance"]
    assert_error(api.patch(url, {"balance": {**scale, "scale": False}}), 400, "0006")
