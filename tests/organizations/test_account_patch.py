"""PATCH .../accounts/{id} with ``alias``: the create rules (format 0047, 409 0020, 422 0074),
and a body that sends fields back unchanged (a GET answer sent back whole) is accepted."""

from __future__ import annotations

import pytest

from tests.conftest import assert_error
from tests.organizations.helpers import account


def test_it_changes_an_alias(api, ledger_url, usd):
    made = account(api, ledger_url, alias="@wallet_1")
    url = f"{ledger_url}/accounts/{made['id']}"
    response = api.patch(url, {"alias": "@wallet_2"})
    assert response.status_code == 200, response.content
    assert response.json()["alias"] == "@wallet_2"
    assert api.get(url).json()["alias"] == "@wallet_2"
    [found] = api.get(f"{ledger_url}/accounts", {"alias": "@wallet_2"}).json()
    assert found["id"] == made["id"]
    assert api.get(f"{ledger_url}/accounts", {"alias": "@wallet_1"}).json() == []


def test_the_old_alias_is_free_for_a_new_account(api, ledger_url, usd):
    made = account(api, ledger_url, alias="@wallet_1")
    api.patch(f"{ledger_url}/accounts/{made['id']}", {"alias": "@wallet_2"})
    assert account(api, ledger_url, alias="@wallet_1")["id"] != made["id"]


def test_it_accepts_the_alias_sent_back_unchanged(api, ledger_url, usd):
    made = account(api, ledger_url, alias="@wallet_1")
    response = api.patch(f"{ledger_url}/accounts/{made['id']}", {"alias": "@wallet_1"})
    assert response.status_code == 200, response.content
    assert response.json()["alias"] == "@wallet_1"


def test_it_refuses_an_alias_another_active_account_holds(api, ledger_url, usd):
    account(api, ledger_url, alias="@taken")
    made = account(api, ledger_url, alias="@mine")
    url = f"{ledger_url}/accounts/{made['id']}"
    assert_error(api.patch(url, {"alias": "@taken"}), 409, "0020")
    assert api.get(url).json()["alias"] == "@mine"


def test_an_alias_of_a_deleted_account_may_be_taken(api, ledger_url, usd):
    gone = account(api, ledger_url, alias="@gone")
    assert api.delete(f"{ledger_url}/accounts/{gone['id']}").status_code == 204
    made = account(api, ledger_url, alias="@mine")
    response = api.patch(f"{ledger_url}/accounts/{made['id']}", {"alias": "@gone"})
    assert response.status_code == 200, response.content


@pytest.mark.parametrize("alias", ["@external/USD", "@external/NEW"])
def test_it_refuses_an_external_alias(api, ledger_url, usd, alias):
    made = account(api, ledger_url, alias="@mine")
    url = f"{ledger_url}/accounts/{made['id']}"
    assert_error(api.patch(url, {"alias": alias}), 422, "0074")
    assert api.get(url).json()["alias"] == "@mine"


@pytest.mark.parametrize("alias", ["wallet", "@", "@a b", "@" + "x" * 101, 7, None, "@mine\n"])
def test_it_refuses_a_malformed_alias(api, ledger_url, usd, alias):
    url = f"{ledger_url}/accounts/{account(api, ledger_url)['id']}"
    assert "alias" in assert_error(api.patch(url, {"alias": alias}), 400, "0047")["fields"]


def test_a_read_answer_sent_back_whole_is_accepted(api, ledger_url, usd):
    """Every fixed field (id, ledgerId, assetCode, type, balance, timestamps...) sent back with
    its stored value is no change; editable fields change as asked."""
    made = account(api, ledger_url, alias="@whole")
    url = f"{ledger_url}/accounts/{made['id']}"
    body = {**api.get(url).json(), "name": "renamed"}
    response = api.patch(url, body)
    assert response.status_code == 200, response.content
    assert response.json()["name"] == "renamed"


@pytest.mark.parametrize(
    "field, value",
    [("assetCode", "EUR"), ("type", "savings"), ("id", "x"), ("balance", {"available": 1})],
)
def test_a_fixed_field_sent_with_another_value_is_still_refused(api, ledger_url, usd, field, value):
    url = f"{ledger_url}/accounts/{account(api, ledger_url)['id']}"
    assert field in assert_error(api.patch(url, {field: value}), 400, "0006")["fields"]
