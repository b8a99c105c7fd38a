"""/instruments: create, read, list, update, delete, and the external account that comes with
each instrument."""

from __future__ import annotations

import pytest

from instruments import services as instrument_services
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

DOLLAR = {"name": "US Dollar", "type": "currency", "code": "USD"}
FIELDS = {
    "id",
    "ledgerId",
    "organizationId",
    "name",
    "type",
    "code",
    "status",
    "metadata",
    "createdAt",
    "updatedAt",
    "deletedAt",
}


def test_it_creates_an_instrument_with_the_default_status(api, ledger, ledger_url):
    response = api.post(f"{ledger_url}/instruments", DOLLAR)
    assert response.status_code == 201, response.content
    body = response.json()
    assert set(body) == FIELDS
    assert body["ledgerId"] == ledger["id"]
    assert body["organizationId"] == ledger["organizationId"]
    assert (body["name"], body["type"], body["code"]) == ("US Dollar", "currency", "USD")
    assert body["status"] == {"code": "ACTIVE", "description": None}
    assert body["metadata"] == {}
    assert body["deletedAt"] is None
    assert body["createdAt"].endswith("+0000")


def test_it_keeps_the_given_status_and_metadata(api, ledger_url):
    body = create(
        api,
        f"{ledger_url}/instruments",
        {
            "name": "Bitcoin",
            "type": "crypto",
            "code": "BTC",
            "status": {"code": "003", "description": "Pre-launch"},
            "metadata": {"chain": "main", "decimals": 8, "listed": True},
        },
    )
    assert body["status"] == {"code": "003", "description": "Pre-launch"}
    assert body["metadata"] == {"chain": "main", "decimals": 8, "listed": True}


def test_it_reads_one_instrument(api, ledger_url, usd):
    response = api.get(f"{ledger_url}/instruments/{usd['id']}")
    assert response.status_code == 200
    assert response.json() == usd


def test_it_creates_the_external_account_with_the_instrument(api, ledger_url, usd):
    response = api.get(f"{ledger_url}/accounts", {"alias": "@external/USD"})
    [external] = response.json()
    assert external["type"] == "external"
    assert external["name"] == "External USD"
    assert external["assetCode"] == "USD"
    assert external["balance"] == {"available": 0, "onHold": 0, "scale": 0}
    assert external["deletedAt"] is None
    assert Balance.objects.get(account_id=external["id"]).is_external is True


def test_it_creates_nothing_when_the_external_account_fails(api, ledger_url, monkeypatch):
    def broken(**kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(instrument_services, "external_account_create", broken)
    assert_error(api.post(f"{ledger_url}/instruments", DOLLAR), 500, "0046")
    monkeypatch.undo()
    assert api.get(f"{ledger_url}/instruments").json() == []
    assert create(api, f"{ledger_url}/instruments", DOLLAR)["code"] == "USD"


def test_it_refuses_missing_fields(api, ledger_url):
    body = assert_error(api.post(f"{ledger_url}/instruments", {"name": "x"}), 400, "0009")
    assert set(body["fields"]) == {"type", "code"}


@pytest.mark.parametrize("kind", ["fiat", "CURRENCY", "Currency"])
def test_it_refuses_an_unknown_type(api, ledger_url, kind):
    body = {**DOLLAR, "type": kind}
    assert_error(api.post(f"{ledger_url}/instruments", body), 400, "0040")


@pytest.mark.parametrize("code", ["usd", "Usd", "US-D", "US D", "ÜSD"])
def test_it_refuses_a_code_that_is_not_upper_case(api, ledger_url, code):
    body = {**DOLLAR, "type": "others", "code": code}
    assert_error(api.post(f"{ledger_url}/instruments", body), 400, "0004")


@pytest.mark.parametrize("code", ["USDX", "ABC", "BTC"])
def test_it_refuses_a_currency_code_outside_iso_4217(api, ledger_url, code):
    body = {**DOLLAR, "code": code}
    assert_error(api.post(f"{ledger_url}/instruments", body), 400, "0005")


def test_a_code_too_long_for_its_external_alias_is_a_400_not_a_500(api, ledger_url):
    """Found by the fuzz run on PostgreSQL: a 92-character code made ``@external/<CODE>``
    longer than an alias may be, and the insert failed (500)."""
    longest = create(
        api, f"{ledger_url}/instruments", {"name": "L", "type": "others", "code": "A" * 91}
    )
    assert longest["code"] == "A" * 91
    body = {"name": "L", "type": "others", "code": "B" * 92}
    assert_error(api.post(f"{ledger_url}/instruments", body), 400, "0047")


def test_it_accepts_non_iso_codes_for_other_types(api, ledger_url):
    for kind, code in [("crypto", "BTC"), ("commodity", "GOLD1"), ("others", "POINTS")]:
        created = create(
            api, f"{ledger_url}/instruments", {"name": code, "type": kind, "code": code}
        )
        assert created["type"] == kind


def test_it_refuses_a_duplicate_code_in_the_ledger(api, ledger_url, usd):
    assert_error(api.post(f"{ledger_url}/instruments", DOLLAR), 409, "0003")


def test_it_answers_409_when_a_concurrent_create_wins(api, ledger_url, usd, monkeypatch):
    monkeypatch.setattr("ledgerproject.db.active_duplicate_exists", lambda *a: False)
    assert_error(api.post(f"{ledger_url}/instruments", DOLLAR), 409, "0003")
    assert len(api.get(f"{ledger_url}/accounts", {"alias": "@external/USD"}).json()) == 1


def test_it_keeps_codes_of_different_ledgers_apart(api, ledger_url, other_ledger_url, usd):
    other = create(api, f"{other_ledger_url}/instruments", DOLLAR)
    assert other["id"] != usd["id"]
    assert ids(api.get(f"{ledger_url}/instruments")) == [usd["id"]]
    assert ids(api.get(f"{other_ledger_url}/instruments")) == [other["id"]]
    externals = api.get(f"{other_ledger_url}/accounts", {"alias": "@external/USD"}).json()
    assert len(externals) == 1 and externals[0]["ledgerId"] == other["ledgerId"]
    assert_error(api.get(f"{other_ledger_url}/instruments/{usd['id']}"), 404, "0007")


def test_it_updates_name_status_and_metadata(api, ledger_url):
    created = create(api, f"{ledger_url}/instruments", {**DOLLAR, "metadata": {"a": "1"}})
    url = f"{ledger_url}/instruments/{created['id']}"
    response = api.patch(
        url,
        {
            "name": "Dollar",
            "status": {"code": "002", "description": "Blocked"},
            "metadata": {"b": 2},
        },
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["name"] == "Dollar"
    assert body["status"] == {"code": "002", "description": "Blocked"}
    assert body["metadata"] == {"b": 2}
    assert (body["code"], body["type"]) == ("USD", "currency")
    assert api.get(url).json() == body


@pytest.mark.parametrize(
    "field, value",
    [
        ("type", "crypto"),
        ("code", "EUR"),
        ("id", "x"),
        ("ledgerId", "x"),
        ("createdAt", "2020-01-01T00:00:00+0000"),
        ("updatedAt", "2020-01-01T00:00:00+0000"),
        ("deletedAt", "2020-01-01T00:00:00+0000"),  # null is its value: no change
    ],
)
def test_it_refuses_to_update_fixed_fields(api, ledger_url, usd, field, value):
    response = api.patch(f"{ledger_url}/instruments/{usd['id']}", {field: value})
    body = assert_error(response, 400, "0006")
    assert field in body["fields"]


def test_it_refuses_unknown_fields(api, ledger_url, usd):
    assert_error(api.post(f"{ledger_url}/instruments", {**DOLLAR, "colour": "red"}), 400, "0053")
    assert_error(api.patch(f"{ledger_url}/instruments/{usd['id']}", {"x": 1}), 400, "0053")


def test_it_refuses_bad_metadata(api, ledger_url):
    body = {**DOLLAR, "metadata": {"nested": {"a": 1}}}
    assert_error(api.post(f"{ledger_url}/instruments", body), 400, "0067")


def test_it_filters_the_list(api, ledger_url):
    usd = create(
        api, f"{ledger_url}/instruments", {**DOLLAR, "metadata": {"region": "us", "tier": 1}}
    )
    eur = create(
        api,
        f"{ledger_url}/instruments",
        {"name": "Euro", "type": "currency", "code": "EUR", "status": {"code": "002"}},
    )
    btc = create(
        api,
        f"{ledger_url}/instruments",
        {"name": "Bitcoin", "type": "crypto", "code": "BTC", "status": {"code": "003"}},
    )
    url = f"{ledger_url}/instruments"
    assert ids(api.get(url)) == [usd["id"], eur["id"], btc["id"]]
    assert ids(api.get(url, {"type": "currency"})) == [usd["id"], eur["id"]]
    assert ids(api.get(url, {"code": "BTC"})) == [btc["id"]]
    assert ids(api.get(url, {"status": "ACTIVE"})) == [usd["id"]]
    assert ids(api.get(f"{url}?status=002&status=003")) == [eur["id"], btc["id"]]
    assert ids(api.get(url, {"metadata.region": "us"})) == [usd["id"]]
    assert ids(api.get(f"{url}?metadata=region:us&metadata=tier:1")) == [usd["id"]]
    assert ids(api.get(url, {"metadata.region": "eu"})) == []
    assert ids(api.get(url, {"type": "crypto", "status": "ACTIVE"})) == []
    assert_error(api.get(url, {"metadata": "no-colon"}), 400, "0082")


def test_it_paginates_with_a_link_header(api, ledger_url):
    made = [instrument(api, ledger_url, code)["id"] for code in ("USD", "EUR", "GBP")]
    first = api.get(f"{ledger_url}/instruments", {"limit": 2})
    assert ids(first) == made[:2]
    link = first["Link"]
    assert link.endswith('>; rel="next"') and link.startswith("<http")
    second = api.get(link[1 : link.index(">")])
    assert ids(second) == made[2:]
    assert "Link" not in second
    assert ids(api.get(f"{ledger_url}/instruments", {"sort_order": "desc"})) == made[::-1]
    assert_error(api.get(f"{ledger_url}/instruments", {"limit": 1001}), 400, "0080")


@pytest.mark.parametrize("count", [1, 12])
def test_it_lists_in_a_constant_number_of_queries(
    api, ledger_url, count, django_assert_max_num_queries
):
    for index in range(count):
        instrument(api, ledger_url, f"C{index}", type="others")
    with django_assert_max_num_queries(5):
        assert len(ids(api.get(f"{ledger_url}/instruments"))) == count


def test_it_deletes_the_instrument_and_its_external_account(api, ledger_url, usd):
    url = f"{ledger_url}/instruments/{usd['id']}"
    assert api.delete(url).status_code == 204
    deleted = api.get(url).json()
    assert deleted["deletedAt"] is not None
    [external] = api.get(f"{ledger_url}/accounts", {"alias": "@external/USD"}).json()
    assert external["deletedAt"] is not None
    assert ids(api.get(f"{ledger_url}/instruments")) == [usd["id"]]
    assert ids(api.get(f"{ledger_url}/instruments", {"deleted": "false"})) == []
    assert ids(api.get(f"{ledger_url}/instruments", {"deleted": "true"})) == [usd["id"]]


def test_it_frees_the_code_after_deletion(api, ledger_url, usd):
    assert api.delete(f"{ledger_url}/instruments/{usd['id']}").status_code == 204
    again = create(api, f"{ledger_url}/instruments", DOLLAR)
    assert again["id"] != usd["id"]
    externals = api.get(f"{ledger_url}/accounts", {"alias": "@external/USD", "deleted": "false"})
    assert len(externals.json()) == 1


@pytest.mark.parametrize("available, on_hold", [(100, 0), (0, 5)])
def test_it_refuses_to_delete_while_an_account_holds_a_balance(
    books_left_unbalanced, api, ledger_url, usd, available, on_hold
):
    holder = account(api, ledger_url, alias="@alice")
    set_balance(holder["id"], available=available, on_hold=on_hold)
    url = f"{ledger_url}/instruments/{usd['id']}"
    assert_error(api.delete(url), 422, "0012")
    assert api.get(url).json()["deletedAt"] is None
    set_balance(holder["id"])
    assert api.delete(url).status_code == 204


def test_it_ignores_the_external_account_and_other_instruments_when_deleting(
    books_left_unbalanced, api, ledger_url, usd, eur
):
    [external] = api.get(f"{ledger_url}/accounts", {"alias": "@external/USD"}).json()
    set_balance(external["id"], available=-500)
    set_balance(account(api, ledger_url, assetCode="EUR")["id"], available=500)
    assert api.delete(f"{ledger_url}/instruments/{usd['id']}").status_code == 204


def test_it_refuses_to_touch_a_deleted_instrument(api, ledger_url, usd):
    url = f"{ledger_url}/instruments/{usd['id']}"
    assert api.delete(url).status_code == 204
    assert_error(api.delete(url), 400, "0013")
    assert_error(api.patch(url, {"name": "x"}), 400, "0013")


def test_it_answers_404_for_unknown_and_malformed_ids(api, ledger_url):
    assert_error(api.get(f"{ledger_url}/instruments/not-a-uuid"), 404, "0007")
    missing = "0190f0a0-0000-7000-8000-000000000000"
    assert_error(api.get(f"{ledger_url}/instruments/{missing}"), 404, "0007")
    assert_error(api.patch(f"{ledger_url}/instruments/{missing}", {"name": "x"}), 404, "0007")
    assert_error(api.delete(f"{ledger_url}/instruments/{missing}"), 404, "0007")


def test_it_refuses_to_create_in_a_deleted_ledger(api, ledger_url):
    assert api.delete(ledger_url).status_code == 204
    assert_error(api.post(f"{ledger_url}/instruments", DOLLAR), 422, "0008")


def test_it_hides_instruments_from_other_organizations(api, ledger_url, usd, outsider, reader):
    assert_isolated(
        outsider,
        reader,
        f"{ledger_url}/instruments",
        f"{ledger_url}/instruments/{usd['id']}",
        {**DOLLAR, "code": "EUR"},
        {"name": "x"},
    )
    assert api.get(f"{ledger_url}/instruments/{usd['id']}").json() == usd


def test_it_refuses_without_a_token(anon, ledger_url, usd):
    assert_error(anon.get(f"{ledger_url}/instruments"), 401, "0041")


def test_deleting_an_instrument_is_an_event_of_its_external_account_too(api, ledger_url, usd):
    """Every change is an event: the external account deleted with its instrument says so."""
    assert api.delete(f"{ledger_url}/instruments/{usd['id']}").status_code == 204
    [external] = api.get(f"{ledger_url}/accounts", {"alias": "@external/USD"}).json()
    deleted = api.get(f"{ledger_url}/events", {"type": "account.deleted"}).json()
    assert [(e["resourceId"], e["data"]["deletedAt"]) for e in deleted] == [
        (external["id"], external["deletedAt"])
    ]
