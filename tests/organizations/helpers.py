"""Helpers and fixtures shared by the tests of a ledger's contents (organizations/ and
instruments/): instruments, accounts, balances, an outsider token and a read-only token."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from organizations.models import Balance
from tests.conftest import Api, assert_error, make_token


def create(api: Api, url: str, body: dict[str, Any]) -> dict[str, Any]:
    response = api.post(url, body)
    assert response.status_code == 201, response.content
    return response.json()


def organization(api: Api, name: str, parent: str | None = None) -> str:
    """A new organization's id (under ``parent`` when given)."""
    body = {"legalName": name, "legalDocument": "1"}
    if parent:
        body["parentOrganizationId"] = parent
    return create(api, "/v1/organizations", body)["id"]


def instrument(api: Api, ledger_url: str, code: str, type: str = "currency") -> dict[str, Any]:
    body = {"name": f"Instrument {code}", "type": type, "code": code}
    return create(api, f"{ledger_url}/instruments", body)


def account(api: Api, ledger_url: str, **body: Any) -> dict[str, Any]:
    return create(api, f"{ledger_url}/accounts", {"assetCode": "USD", **body})


def set_balance(account_id: str, *, available: int = 0, on_hold: int = 0) -> None:
    """The posting engine is not part of these tests: write the balance row directly (the test
    takes ``books_left_unbalanced``: no operation explains the balance)."""
    updated = Balance.objects.filter(account_id=account_id).update(
        available=available, on_hold=on_hold
    )
    assert updated == 1


def ids(response: Any) -> list[str]:
    assert response.status_code == 200, response.content
    return [item["id"] for item in response.json()]


def assert_isolated(
    outsider: Api,
    reader: Api,
    collection_url: str,
    item_url: str,
    create_body: dict[str, Any],
    patch_body: dict[str, Any],
) -> None:
    """A token limited to another organization sees nothing (404 0007) and a read-only token
    reads but may not write (403 0043)."""
    assert_error(outsider.get(collection_url), 404, "0007")
    assert_error(outsider.post(collection_url, create_body), 404, "0007")
    assert_error(outsider.get(item_url), 404, "0007")
    assert_error(outsider.patch(item_url, patch_body), 404, "0007")
    assert_error(outsider.delete(item_url), 404, "0007")
    assert reader.get(collection_url).status_code == 200
    assert reader.get(item_url).status_code == 200
    assert_error(reader.post(collection_url, create_body), 403, "0043")
    assert_error(reader.patch(item_url, patch_body), 403, "0043")
    assert_error(reader.delete(item_url), 403, "0043")


@pytest.fixture
def other_organization(api: Api) -> dict[str, Any]:
    return create(api, "/v1/organizations", {"legalName": "Other", "legalDocument": "999"})


@pytest.fixture
def outsider(other_organization: dict[str, Any]) -> Api:
    """A token limited to another organization."""
    org_id = uuid.UUID(other_organization["id"])
    return Api(make_token("outsider", organization_ids=[org_id]))


@pytest.fixture
def reader(db: Any) -> Api:
    return Api(make_token("reader", read_only=True))


@pytest.fixture
def usd(api: Api, ledger_url: str) -> dict[str, Any]:
    return instrument(api, ledger_url, "USD")


@pytest.fixture
def eur(api: Api, ledger_url: str) -> dict[str, Any]:
    return instrument(api, ledger_url, "EUR")


@pytest.fixture
def other_ledger_url(api: Api, ledger: dict[str, Any]) -> str:
    org_id = ledger["organizationId"]
    other = create(api, f"/v1/organizations/{org_id}/ledgers", {"name": "Second"})
    return f"/v1/organizations/{org_id}/ledgers/{other['id']}"
