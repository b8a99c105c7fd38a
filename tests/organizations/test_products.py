"""/products: CRUD, unique names among a ledger's active products, filters."""

from __future__ import annotations

import pytest

from tests.conftest import assert_error
from tests.organizations.helpers import account, assert_isolated, create, ids

FIELDS = {
    "id",
    "organizationId",
    "ledgerId",
    "name",
    "status",
    "metadata",
    "createdAt",
    "updatedAt",
    "deletedAt",
}


def test_it_creates_and_reads_a_product(api, ledger, ledger_url):
    response = api.post(f"{ledger_url}/products", {"name": "Gold", "metadata": {"tier": 1}})
    assert response.status_code == 201, response.content
    body = response.json()
    assert set(body) == FIELDS
    assert body["status"] == {"code": "ACTIVE", "description": None}
    assert body["metadata"] == {"tier": 1}
    assert body["ledgerId"] == ledger["id"]
    assert api.get(f"{ledger_url}/products/{body['id']}").json() == body


def test_it_refuses_a_product_without_a_name(api, ledger_url):
    assert_error(api.post(f"{ledger_url}/products", {}), 400, "0009")
    assert_error(api.post(f"{ledger_url}/products", {"name": ""}), 400, "0047")


def test_it_refuses_a_duplicate_name_among_active_products(api, ledger_url, other_ledger_url):
    first = create(api, f"{ledger_url}/products", {"name": "Gold"})
    assert_error(api.post(f"{ledger_url}/products", {"name": "Gold"}), 409, "0015")
    create(api, f"{other_ledger_url}/products", {"name": "Gold"})
    silver = create(api, f"{ledger_url}/products", {"name": "Silver"})
    silver_url = f"{ledger_url}/products/{silver['id']}"
    assert_error(api.patch(silver_url, {"name": "Gold"}), 409, "0015")
    assert api.patch(silver_url, {"name": "Silver"}).status_code == 200
    assert api.delete(f"{ledger_url}/products/{first['id']}").status_code == 204
    assert api.patch(silver_url, {"name": "Gold"}).json()["name"] == "Gold"


def test_it_answers_409_when_a_concurrent_create_wins(api, ledger_url, monkeypatch):

    create(api, f"{ledger_url}/products", {"name": "Gold"})
    monkeypatch.setattr("ledgerproject.db.active_duplicate_exists", lambda *a: False)
    assert_error(api.post(f"{ledger_url}/products", {"name": "Gold"}), 409, "0015")


def test_it_updates_name_status_and_metadata(api, ledger_url):
    made = create(api, f"{ledger_url}/products", {"name": "Gold", "metadata": {"a": 1}})
    response = api.patch(
        f"{ledger_url}/products/{made['id']}",
        {
            "name": "Platinum",
            "status": {"code": "003", "description": "Pre-launch"},
            "metadata": {},
        },
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["name"], body["status"]["code"], body["metadata"]) == ("Platinum", "003", {})


@pytest.mark.parametrize("field", ["id", "ledgerId", "organizationId", "createdAt", "deletedAt"])
def test_it_refuses_to_update_fixed_fields(api, ledger_url, field):
    made = create(api, f"{ledger_url}/products", {"name": "Gold"})
    assert_error(api.patch(f"{ledger_url}/products/{made['id']}", {field: "x"}), 400, "0006")


def test_it_soft_deletes_a_product(api, ledger_url, usd):
    made = create(api, f"{ledger_url}/products", {"name": "Gold"})
    holder = account(api, ledger_url, productId=made["id"])
    url = f"{ledger_url}/products/{made['id']}"
    assert api.delete(url).status_code == 204
    assert api.get(url).json()["deletedAt"] is not None
    assert ids(api.get(f"{ledger_url}/products")) == [made["id"]]
    assert ids(api.get(f"{ledger_url}/products", {"deleted": "false"})) == []
    assert_error(api.delete(url), 400, "0013")
    assert_error(api.patch(url, {"name": "x"}), 400, "0013")
    assert api.get(f"{ledger_url}/accounts/{holder['id']}").json()["productId"] == made["id"]


def test_it_filters_by_status_ledger_and_metadata(api, ledger, ledger_url):
    gold = create(api, f"{ledger_url}/products", {"name": "Gold", "metadata": {"k": "v"}})
    silver = create(api, f"{ledger_url}/products", {"name": "Silver", "status": {"code": "002"}})
    bronze = create(api, f"{ledger_url}/products", {"name": "Bronze", "status": {"code": "003"}})
    url = f"{ledger_url}/products"
    assert ids(api.get(url, {"status": "ACTIVE"})) == [gold["id"]]
    assert ids(api.get(f"{url}?status=002&status=003")) == [silver["id"], bronze["id"]]
    assert ids(api.get(url, {"ledgerId": ledger["id"]})) == [gold["id"], silver["id"], bronze["id"]]
    assert ids(api.get(url, {"ledgerId": "0190f0a0-0000-7000-8000-000000000000"})) == []
    assert_error(api.get(url, {"ledgerId": "nope"}), 400, "0082")
    assert ids(api.get(url, {"metadata.k": "v"})) == [gold["id"]]


@pytest.mark.parametrize("count", [1, 12])
def test_it_lists_in_a_constant_number_of_queries(
    api, ledger_url, count, django_assert_max_num_queries
):
    for index in range(count):
        create(api, f"{ledger_url}/products", {"name": f"P{index}"})
    with django_assert_max_num_queries(5):
        assert len(ids(api.get(f"{ledger_url}/products"))) == count


def test_it_hides_products_from_other_organizations(api, ledger_url, outsider, reader):
    made = create(api, f"{ledger_url}/products", {"name": "Gold"})
    assert_isolated(
        outsider,
        reader,
        f"{ledger_url}/products",
        f"{ledger_url}/products/{made['id']}",
        {"name": "Other"},
        {"name": "x"},
    )
    assert api.get(f"{ledger_url}/products/{made['id']}").json() == made


def test_it_answers_404_for_products_of_another_ledger(api, ledger_url, other_ledger_url):
    made = create(api, f"{ledger_url}/products", {"name": "Gold"})
    assert_error(api.get(f"{other_ledger_url}/products/{made['id']}"), 404, "0007")
