"""/portfolios: CRUD with an optional entityId."""

from __future__ import annotations

import pytest

from tests.conftest import assert_error
from tests.organizations.helpers import assert_isolated, create, ids

FIELDS = {
    "id",
    "organizationId",
    "ledgerId",
    "entityId",
    "name",
    "status",
    "metadata",
    "createdAt",
    "updatedAt",
    "deletedAt",
}


def test_it_creates_and_reads_a_portfolio(api, ledger, ledger_url):
    response = api.post(f"{ledger_url}/portfolios", {"name": "Retail", "entityId": "cust-1"})
    assert response.status_code == 201, response.content
    body = response.json()
    assert set(body) == FIELDS
    assert (body["name"], body["entityId"]) == ("Retail", "cust-1")
    assert body["status"] == {"code": "ACTIVE", "description": None}
    assert (body["ledgerId"], body["organizationId"]) == (ledger["id"], ledger["organizationId"])
    assert api.get(f"{ledger_url}/portfolios/{body['id']}").json() == body


def test_it_defaults_entity_id_to_null(api, ledger_url):
    assert create(api, f"{ledger_url}/portfolios", {"name": "Retail"})["entityId"] is None


def test_it_refuses_bad_bodies(api, ledger_url):
    assert_error(api.post(f"{ledger_url}/portfolios", {"entityId": "x"}), 400, "0009")
    assert_error(api.post(f"{ledger_url}/portfolios", {"name": "x", "y": 1}), 400, "0053")
    assert_error(api.post(f"{ledger_url}/portfolios", {"name": "x", "id": "y"}), 400, "0006")


def test_it_updates_a_portfolio(api, ledger_url):
    made = create(api, f"{ledger_url}/portfolios", {"name": "Retail", "entityId": "a"})
    response = api.patch(
        f"{ledger_url}/portfolios/{made['id']}",
        {"name": "Wholesale", "entityId": None, "metadata": {"x": True}},
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["name"], body["entityId"], body["metadata"]) == ("Wholesale", None, {"x": True})


@pytest.mark.parametrize("field", ["id", "organizationId", "ledgerId", "updatedAt"])
def test_it_refuses_to_update_fixed_fields(api, ledger_url, field):
    made = create(api, f"{ledger_url}/portfolios", {"name": "Retail"})
    assert_error(api.patch(f"{ledger_url}/portfolios/{made['id']}", {field: "x"}), 400, "0006")


def test_it_soft_deletes_a_portfolio(api, ledger_url):
    made = create(api, f"{ledger_url}/portfolios", {"name": "Retail"})
    url = f"{ledger_url}/portfolios/{made['id']}"
    assert api.delete(url).status_code == 204
    assert api.get(url).json()["deletedAt"] is not None
    assert ids(api.get(f"{ledger_url}/portfolios")) == [made["id"]]
    assert ids(api.get(f"{ledger_url}/portfolios", {"deleted": "false"})) == []
    assert_error(api.delete(url), 400, "0013")
    assert_error(api.patch(url, {"name": "x"}), 400, "0013")


def test_it_filters_portfolios(api, ledger_url):
    a = create(api, f"{ledger_url}/portfolios", {"name": "A", "entityId": "e1"})
    b = create(api, f"{ledger_url}/portfolios", {"name": "B", "status": {"code": "002"}})
    c = create(api, f"{ledger_url}/portfolios", {"name": "C", "metadata": {"k": "v"}})
    url = f"{ledger_url}/portfolios"
    assert ids(api.get(url, {"entityId": "e1"})) == [a["id"]]
    assert ids(api.get(f"{url}?status=002&status=ACTIVE")) == [a["id"], b["id"], c["id"]]
    assert ids(api.get(url, {"status": "002"})) == [b["id"]]
    assert ids(api.get(url, {"metadata.k": "v"})) == [c["id"]]


@pytest.mark.parametrize("count", [1, 12])
def test_it_lists_in_a_constant_number_of_queries(
    api, ledger_url, count, django_assert_max_num_queries
):
    for index in range(count):
        create(api, f"{ledger_url}/portfolios", {"name": f"P{index}"})
    with django_assert_max_num_queries(5):
        assert len(ids(api.get(f"{ledger_url}/portfolios"))) == count


def test_it_hides_portfolios_from_other_organizations(api, ledger_url, outsider, reader):
    made = create(api, f"{ledger_url}/portfolios", {"name": "Retail"})
    assert_isolated(
        outsider,
        reader,
        f"{ledger_url}/portfolios",
        f"{ledger_url}/portfolios/{made['id']}",
        {"name": "Other"},
        {"name": "x"},
    )
    assert api.get(f"{ledger_url}/portfolios/{made['id']}").json() == made
