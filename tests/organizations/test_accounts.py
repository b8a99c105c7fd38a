"""/accounts: CRUD with the embedded balance, alias rules, references to products, portfolios and
parent accounts, external accounts, and the zero-balance delete guard."""

from __future__ import annotations

import pytest

from organizations.models import Balance
from tests.conftest import assert_error
from tests.organizations.helpers import (
    account,
    assert_isolated,
    create,
    ids,
    instrument,
    set_balance,
)

FIELDS = {
    "id",
    "overdraftLimit",
    "organizationId",
    "ledgerId",
    "portfolioId",
    "productId",
    "parentAccountId",
    "entityId",
    "name",
    "alias",
    "type",
    "assetCode",
    "allowSending",
    "allowReceiving",
    "balance",
    "status",
    "metadata",
    "createdAt",
    "updatedAt",
    "deletedAt",
}
MISSING = "0190f0a0-0000-7000-8000-000000000000"


@pytest.fixture
def external(api, ledger_url, usd):
    [row] = api.get(f"{ledger_url}/accounts", {"alias": "@external/USD"}).json()
    return row


def test_it_creates_an_account_with_defaults(api, ledger, ledger_url, usd):
    response = api.post(f"{ledger_url}/accounts", {"assetCode": "USD"})
    assert response.status_code == 201, response.content
    body = response.json()
    assert set(body) == FIELDS
    assert body["alias"] == f"@{body['id']}"
    assert body["type"] == "deposit"
    assert body["name"] == ""
    assert (body["allowSending"], body["allowReceiving"]) == (True, True)
    assert body["balance"] == {"available": 0, "onHold": 0, "scale": 0}
    assert body["overdraftLimit"] == {"amount": 0, "scale": 0}
    assert body["status"] == {"code": "ACTIVE", "description": None}
    assert (body["portfolioId"], body["productId"], body["parentAccountId"]) == (None, None, None)
    assert (body["ledgerId"], body["organizationId"]) == (ledger["id"], ledger["organizationId"])
    balance = Balance.objects.get(account_id=body["id"])
    assert (balance.is_external, balance.asset_code, balance.version) == (False, "USD", 0)
    assert api.get(f"{ledger_url}/accounts/{body['id']}").json() == body


def test_it_creates_an_account_with_every_field(api, ledger_url, usd):
    portfolio = create(api, f"{ledger_url}/portfolios", {"name": "Retail"})
    product = create(api, f"{ledger_url}/products", {"name": "Gold"})
    parent = account(api, ledger_url, alias="@parent")
    body = account(
        api,
        ledger_url,
        name="Alice",
        alias="@alice_1-x/y.z",
        type="savings",
        entityId="cust-1",
        portfolioId=portfolio["id"],
        productId=product["id"],
        parentAccountId=parent["id"],
        allowSending=False,
        allowReceiving=True,
        status={"code": "002", "description": "Blocked"},
        metadata={"k": "v"},
    )
    assert body["alias"] == "@alice_1-x/y.z"
    assert (body["name"], body["type"], body["entityId"]) == ("Alice", "savings", "cust-1")
    assert (body["portfolioId"], body["productId"], body["parentAccountId"]) == (
        portfolio["id"],
        product["id"],
        parent["id"],
    )
    assert (body["allowSending"], body["allowReceiving"]) == (False, True)
    assert body["status"] == {"code": "002", "description": "Blocked"}


def test_it_refuses_a_missing_asset_code(api, ledger_url, usd):
    assert_error(api.post(f"{ledger_url}/accounts", {"alias": "@a"}), 400, "0009")


def test_it_refuses_an_asset_code_that_is_not_an_active_instrument(
    api, ledger_url, other_ledger_url, usd
):
    assert_error(api.post(f"{ledger_url}/accounts", {"assetCode": "EUR"}), 422, "0034")
    instrument(api, other_ledger_url, "EUR")
    assert_error(api.post(f"{ledger_url}/accounts", {"assetCode": "EUR"}), 422, "0034")
    assert api.delete(f"{ledger_url}/instruments/{usd['id']}").status_code == 204
    assert_error(api.post(f"{ledger_url}/accounts", {"assetCode": "USD"}), 422, "0034")


@pytest.mark.parametrize(
    "alias", ["alice", "@", "@a b", "@a!", "@" + "x" * 101, 12, "@alice ", " @alice", "@alice\n"]
)
def test_it_refuses_a_malformed_alias(api, ledger_url, usd, alias):
    body = {"assetCode": "USD", "alias": alias}
    assert "alias" in assert_error(api.post(f"{ledger_url}/accounts", body), 400, "0047")["fields"]


def test_it_accepts_an_alias_of_a_hundred_characters(api, ledger_url, usd):
    assert account(api, ledger_url, alias="@" + "x" * 100)["alias"] == "@" + "x" * 100


def test_it_refuses_a_duplicate_alias_among_active_accounts(api, ledger_url, other_ledger_url, usd):
    first = account(api, ledger_url, alias="@alice")
    assert_error(
        api.post(f"{ledger_url}/accounts", {"assetCode": "USD", "alias": "@alice"}), 409, "0020"
    )
    instrument(api, other_ledger_url, "USD")
    account(api, other_ledger_url, alias="@alice")
    assert api.delete(f"{ledger_url}/accounts/{first['id']}").status_code == 204
    assert account(api, ledger_url, alias="@alice")["id"] != first["id"]


def test_it_answers_409_when_a_concurrent_create_wins(api, ledger_url, usd, monkeypatch):
    account(api, ledger_url, alias="@alice")
    monkeypatch.setattr("ledgerproject.db.active_duplicate_exists", lambda *a: False)
    body = {"assetCode": "USD", "alias": "@alice"}
    assert_error(api.post(f"{ledger_url}/accounts", body), 409, "0020")
    assert Balance.objects.filter(account__alias="@alice").count() == 1


@pytest.mark.parametrize(
    "body",
    [
        {"alias": "@external/USD"},
        {"alias": "@external/EUR"},
        {"type": "external"},
        {"alias": "@ext", "type": "external"},
    ],
)
def test_it_refuses_to_create_external_accounts(api, ledger_url, usd, body):
    response = api.post(f"{ledger_url}/accounts", {"assetCode": "USD", **body})
    assert_error(response, 422, "0074")


def test_it_refuses_to_change_or_delete_an_external_account(api, ledger_url, external):
    url = f"{ledger_url}/accounts/{external['id']}"
    assert_error(api.patch(url, {"name": "mine"}), 422, "0074")
    assert_error(api.patch(url, {"allowSending": False}), 422, "0074")
    assert_error(api.delete(url), 422, "0074")
    assert api.get(url).json() == external


def test_it_checks_product_and_portfolio(api, ledger_url, other_ledger_url, usd):
    product = create(api, f"{ledger_url}/products", {"name": "Gold"})
    portfolio = create(api, f"{ledger_url}/portfolios", {"name": "Retail"})
    foreign_product = create(api, f"{other_ledger_url}/products", {"name": "Gold"})
    foreign_portfolio = create(api, f"{other_ledger_url}/portfolios", {"name": "Retail"})
    url = f"{ledger_url}/accounts"
    for product_id in (MISSING, foreign_product["id"]):
        assert_error(api.post(url, {"assetCode": "USD", "productId": product_id}), 422, "0036")
    for portfolio_id in (MISSING, foreign_portfolio["id"]):
        body = {"assetCode": "USD", "portfolioId": portfolio_id}
        assert_error(api.post(url, body), 422, "0035")
    assert_error(api.post(url, {"assetCode": "USD", "productId": "nope"}), 400, "0047")
    assert api.delete(f"{ledger_url}/products/{product['id']}").status_code == 204
    assert api.delete(f"{ledger_url}/portfolios/{portfolio['id']}").status_code == 204
    assert_error(api.post(url, {"assetCode": "USD", "productId": product["id"]}), 422, "0036")
    assert_error(api.post(url, {"assetCode": "USD", "portfolioId": portfolio["id"]}), 422, "0035")


def test_it_checks_the_parent_account(api, ledger_url, other_ledger_url, usd, eur, external):
    url = f"{ledger_url}/accounts"
    instrument(api, other_ledger_url, "USD")
    foreign = account(api, other_ledger_url)
    gone = account(api, ledger_url)
    assert api.delete(f"{url}/{gone['id']}").status_code == 204
    for parent_id in (MISSING, foreign["id"], gone["id"], external["id"]):
        body = {"assetCode": "USD", "parentAccountId": parent_id}
        error = assert_error(api.post(url, body), 422, "0008")
        assert error["fields"] == {"parentAccountId": "not an active account of this ledger"}


def test_a_parent_may_hold_another_asset(api, ledger_url, usd, eur):
    """A tree groups accounts, whatever they hold: its rolled-up balance is per asset."""
    euro = account(api, ledger_url, assetCode="EUR")
    child = account(api, ledger_url, assetCode="USD", parentAccountId=euro["id"])
    assert child["parentAccountId"] == euro["id"]


def test_it_updates_the_editable_fields(api, ledger_url, usd):
    product = create(api, f"{ledger_url}/products", {"name": "Gold"})
    portfolio = create(api, f"{ledger_url}/portfolios", {"name": "Retail"})
    made = account(api, ledger_url, alias="@alice", metadata={"old": 1})
    url = f"{ledger_url}/accounts/{made['id']}"
    response = api.patch(
        url,
        {
            "name": "Alice",
            "status": {"code": "002", "description": "Blocked"},
            "metadata": {"new": "x"},
            "productId": product["id"],
            "portfolioId": portfolio["id"],
            "entityId": "cust-9",
            "allowSending": False,
            "allowReceiving": False,
        },
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["name"] == "Alice"
    assert body["metadata"] == {"new": "x"}
    assert (body["productId"], body["portfolioId"], body["entityId"]) == (
        product["id"],
        portfolio["id"],
        "cust-9",
    )
    assert (body["allowSending"], body["allowReceiving"]) == (False, False)
    assert body["alias"] == "@alice" and body["balance"] == made["balance"]
    assert api.get(url).json() == body
    cleared = api.patch(url, {"productId": None, "portfolioId": None}).json()
    assert (cleared["productId"], cleared["portfolioId"]) == (None, None)


def test_it_refuses_patches_to_missing_products_and_portfolios(api, ledger_url, usd):
    url = f"{ledger_url}/accounts/{account(api, ledger_url)['id']}"
    assert_error(api.patch(url, {"productId": MISSING}), 422, "0036")
    assert_error(api.patch(url, {"portfolioId": MISSING}), 422, "0035")
    assert_error(api.patch(url, {"allowSending": "yes"}), 400, "0047")


@pytest.mark.parametrize(
    "field",
    # alias (tests/organizations/test_account_patch.py) and parentAccountId
    # (tests/transactions/test_account_trees.py) are editable
    ["assetCode", "type", "balance", "id", "ledgerId", "createdAt"],
)
def test_it_refuses_to_update_fixed_fields(api, ledger_url, usd, field):
    url = f"{ledger_url}/accounts/{account(api, ledger_url)['id']}"
    assert field in assert_error(api.patch(url, {field: "x"}), 400, "0006")["fields"]


@pytest.mark.parametrize("available, on_hold", [(1, 0), (0, 1), (5, 5)])
def test_it_refuses_to_delete_an_account_holding_a_balance(
    books_left_unbalanced, api, ledger_url, usd, available, on_hold
):
    made = account(api, ledger_url)
    set_balance(made["id"], available=available, on_hold=on_hold)
    url = f"{ledger_url}/accounts/{made['id']}"
    assert api.get(url).json()["balance"] == {"available": available, "onHold": on_hold, "scale": 0}
    assert_error(api.delete(url), 422, "0012")
    set_balance(made["id"])
    assert api.delete(url).status_code == 204


def test_it_soft_deletes_an_account(api, ledger_url, usd, external):
    made = account(api, ledger_url)
    url = f"{ledger_url}/accounts/{made['id']}"
    assert api.delete(url).status_code == 204
    body = api.get(url).json()
    assert body["deletedAt"] is not None and body["balance"]["available"] == 0
    assert ids(api.get(f"{ledger_url}/accounts")) == [external["id"], made["id"]]
    assert ids(api.get(f"{ledger_url}/accounts", {"deleted": "false"})) == [external["id"]]
    assert_error(api.delete(url), 400, "0013")
    assert_error(api.patch(url, {"name": "x"}), 400, "0013")


def test_it_filters_accounts(api, ledger_url, usd, eur, external):
    product = create(api, f"{ledger_url}/products", {"name": "Gold"})
    portfolio = create(api, f"{ledger_url}/portfolios", {"name": "Retail"})
    alice = account(api, ledger_url, alias="@alice", productId=product["id"], metadata={"k": "v"})
    bob = account(
        api,
        ledger_url,
        alias="@bob",
        type="savings",
        portfolioId=portfolio["id"],
        status={"code": "002"},
    )
    carol = account(api, ledger_url, alias="@carol", assetCode="EUR", status={"code": "003"})
    url = f"{ledger_url}/accounts"
    assert ids(api.get(url, {"alias": "@bob"})) == [bob["id"]]
    assert ids(api.get(url, {"alias": "@nobody"})) == []
    assert ids(api.get(url, {"assetCode": "EUR"})) == [
        a["id"] for a in api.get(url, {"alias": "@external/EUR"}).json()
    ] + [carol["id"]]
    assert ids(api.get(url, {"type": "savings"})) == [bob["id"]]
    assert ids(api.get(url, {"type": "external", "assetCode": "USD"})) == [external["id"]]
    assert ids(api.get(url, {"productId": product["id"]})) == [alice["id"]]
    assert ids(api.get(url, {"portfolioId": portfolio["id"]})) == [bob["id"]]
    assert ids(api.get(f"{url}?status=002&status=003")) == [bob["id"], carol["id"]]
    assert ids(api.get(url, {"metadata.k": "v"})) == [alice["id"]]
    assert ids(api.get(f"{url}?metadata=k:v")) == [alice["id"]]
    assert_error(api.get(url, {"productId": "nope"}), 400, "0082")


@pytest.mark.parametrize("count", [1, 12])
def test_it_lists_accounts_and_balances_in_a_constant_number_of_queries(
    books_left_unbalanced, api, ledger_url, usd, count, django_assert_max_num_queries
):
    for index in range(count):
        set_balance(account(api, ledger_url, alias=f"@a{index}")["id"], available=index)
    with django_assert_max_num_queries(5):
        listed = api.get(f"{ledger_url}/accounts").json()
    assert len(listed) == count + 1
    assert [a["balance"]["available"] for a in listed[1:]] == list(range(count))


def test_it_hides_accounts_from_other_organizations(api, ledger_url, usd, outsider, reader):
    made = account(api, ledger_url, alias="@alice")
    assert_isolated(
        outsider,
        reader,
        f"{ledger_url}/accounts",
        f"{ledger_url}/accounts/{made['id']}",
        {"assetCode": "USD", "alias": "@mallory"},
        {"name": "x"},
    )
    assert api.get(f"{ledger_url}/accounts/{made['id']}").json() == made


def test_it_answers_404_for_accounts_of_another_ledger(api, ledger_url, other_ledger_url, usd):
    made = account(api, ledger_url)
    assert_error(api.get(f"{other_ledger_url}/accounts/{made['id']}"), 404, "0007")
    assert_error(api.patch(f"{other_ledger_url}/accounts/{made['id']}", {"name": "x"}), 404, "0007")
    assert_error(api.get(f"{ledger_url}/accounts/nope"), 404, "0007")
