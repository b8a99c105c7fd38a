"""GET .../accounts/alias/{alias} and the balances resource (.../balances and
.../accounts/{id}/balances): filters, keyset pages, tenancy."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from tests.conftest import Api, assert_error, make_token

BALANCE_FIELDS = {
    "id", "organizationId", "ledgerId", "accountId", "alias", "assetCode", "accountType",
    "available", "onHold", "scale", "overdraftLimit", "version", "allowSending",
    "allowReceiving", "createdAt", "updatedAt", "deletedAt",
}  # fmt: skip


@pytest.mark.parametrize("alias", ["@alice", "@fees/platform", "@external/BRL"])
def test_it_finds_an_account_by_its_url_encoded_alias(book, alias):
    response = book.api.get(f"{book.url}/accounts/alias/{quote(alias, safe='')}")
    assert response.status_code == 200, response.content
    assert response.json()["alias"] == alias
    assert set(response.json()) >= {"id", "balance", "assetCode"}


def test_the_alias_may_come_unencoded_and_without_its_at_sign(book):
    assert book.api.get(f"{book.url}/accounts/alias/@fees/platform").json()["alias"] == (
        "@fees/platform"
    )
    assert book.api.get(f"{book.url}/accounts/alias/alice").json()["alias"] == "@alice"


def test_an_unknown_or_deleted_alias_is_404(book):
    assert_error(book.api.get(f"{book.url}/accounts/alias/%40nobody"), 404, "0007")
    carol = book.account("@carol")
    assert book.api.delete(f"{book.url}/accounts/{carol['id']}").status_code == 204
    assert_error(book.api.get(f"{book.url}/accounts/alias/%40carol"), 404, "0007")


def test_another_tenant_finds_neither_the_alias_nor_the_balances(book):
    made = book.api.post("/v1/organizations", {"legalName": "Other", "legalDocument": "1"})
    outsider = Api(make_token("outsider", organization_ids=[made.json()["id"]]))
    assert_error(outsider.get(f"{book.url}/accounts/alias/%40alice"), 404, "0007")
    assert_error(outsider.get(f"{book.url}/balances"), 404, "0007")


def test_the_balances_list(book):
    book.fund("@alice", 500)
    response = book.api.get(f"{book.url}/balances")
    assert response.status_code == 200, response.content
    rows = response.json()
    assert all(set(row) == BALANCE_FIELDS for row in rows)
    by_alias = {row["alias"]: row for row in rows}
    assert set(by_alias) == {"@external/BRL", "@alice", "@bob", "@fees/platform"}
    assert (by_alias["@alice"]["available"], by_alias["@alice"]["scale"]) == (500, 2)
    assert by_alias["@external/BRL"]["available"] == -500
    assert by_alias["@alice"]["accountId"] == book.accounts["@alice"]["id"]


def test_the_balance_filters(book):
    book.fund("@alice", 500)
    get = book.api.get
    assert [r["alias"] for r in get(f"{book.url}/balances", {"alias": "@alice"}).json()] == [
        "@alice"
    ]
    non_zero = get(f"{book.url}/balances", {"nonZero": "true"}).json()
    assert {r["alias"] for r in non_zero} == {"@alice", "@external/BRL"}
    zero = get(f"{book.url}/balances", {"nonZero": "false"}).json()
    assert {r["alias"] for r in zero} == {"@bob", "@fees/platform"}
    assert get(f"{book.url}/balances", {"assetCode": "USD"}).json() == []
    assert len(get(f"{book.url}/balances", {"assetCode": "BRL"}).json()) == 4
    assert_error(get(f"{book.url}/balances", {"nonZero": "maybe"}), 400, "0082")
    assert (
        "cursor"
        in assert_error(get(f"{book.url}/balances", {"page": 2}), 400, "0082")["description"]
    )


def test_the_balances_are_keyset_paged(book):
    url = f"{book.url}/balances"
    seen, query = [], {"limit": 1}
    while True:
        response = book.api.get(url, query)
        assert response.status_code == 200
        seen += [r["alias"] for r in response.json()]
        link = response.headers.get("Link")
        if not link:
            break
        query = {"limit": 1, "cursor": link.split("cursor=")[1].split(">")[0].split("&")[0]}
    assert seen == ["@external/BRL", "@alice", "@bob", "@fees/platform"]
    desc = book.api.get(url, {"sort_order": "desc"}).json()
    assert [r["alias"] for r in desc] == list(reversed(seen))


def test_an_accounts_balances(book):
    book.fund("@bob", 7)
    response = book.api.get(f"{book.url}/accounts/{book.accounts['@bob']['id']}/balances")
    assert response.status_code == 200, response.content
    [row] = response.json()
    assert (row["alias"], row["available"]) == ("@bob", 7)
    missing = "0190f0a0-0000-7000-8000-000000000000"
    assert_error(book.api.get(f"{book.url}/accounts/{missing}/balances"), 404, "0007")
    assert_error(book.api.get(f"{book.url}/accounts/nope/balances"), 404, "0007")


def test_a_balance_shows_its_overdraft_limit(book):
    """The limit keeps the scale it was given (25.00 stays 2500 at scale 2, raising the empty
    balance's scale to 2); external balances are unbounded (null)."""
    book.account("@carol", overdraftLimit={"amount": 2500, "scale": 2})
    rows = {row["alias"]: row for row in book.api.get(f"{book.url}/balances").json()}
    assert rows["@carol"]["overdraftLimit"] == {"amount": 2500, "scale": rows["@carol"]["scale"]}
    assert rows["@carol"]["scale"] == 2
    assert rows["@alice"]["overdraftLimit"]["amount"] == 0
    assert rows["@external/BRL"]["overdraftLimit"] is None
