"""Ledgers under an organization."""

from __future__ import annotations

from tests.conftest import assert_error


def test_it_creates_reads_updates_and_deletes_a_ledger(api, organization):
    base = f"/v1/organizations/{organization['id']}/ledgers"
    created = api.post(base, {"name": "Main", "metadata": {"region": "eu"}})
    assert created.status_code == 201
    ledger = created.json()
    assert ledger["organizationId"] == organization["id"]
    assert ledger["status"] == {"code": "ACTIVE", "description": None}
    url = f"{base}/{ledger['id']}"
    assert api.get(url).json() == ledger
    updated = api.patch(url, {"name": "Renamed", "metadata": {}}).json()
    assert (updated["name"], updated["metadata"]) == ("Renamed", {})
    assert api.delete(url).status_code == 204
    assert api.get(url).json()["deletedAt"] is not None
    assert_error(api.delete(url), 400, "0013")


def test_it_keeps_ledger_names_unique_among_active_ledgers(api, organization):
    base = f"/v1/organizations/{organization['id']}/ledgers"
    first = api.post(base, {"name": "Main"}).json()
    assert_error(api.post(base, {"name": "Main"}), 409, "0002")
    other = api.post(base, {"name": "Other"}).json()
    assert_error(api.patch(f"{base}/{other['id']}", {"name": "Main"}), 409, "0002")
    api.delete(f"{base}/{first['id']}")
    assert api.post(base, {"name": "Main"}).status_code == 201


def test_it_keeps_ledgers_of_other_organizations_apart(api, organization):
    other = api.post("/v1/organizations", {"legalName": "O", "legalDocument": "2"}).json()
    ledger = api.post(f"/v1/organizations/{other['id']}/ledgers", {"name": "L"}).json()
    assert_error(
        api.get(f"/v1/organizations/{organization['id']}/ledgers/{ledger['id']}"), 404, "0007"
    )
    assert api.get(f"/v1/organizations/{organization['id']}/ledgers").json() == []


def test_it_refuses_unmodifiable_and_unknown_fields(api, ledger_url):
    assert_error(api.patch(ledger_url, {"organizationId": "x"}), 400, "0006")
    assert_error(api.patch(ledger_url, {"colour": "red"}), 400, "0053")
    assert_error(api.post(ledger_url.rsplit("/", 1)[0], {}), 400, "0009")


def test_it_lists_ledgers_with_a_constant_number_of_queries(
    api, organization, django_assert_max_num_queries
):
    base = f"/v1/organizations/{organization['id']}/ledgers"
    for i in range(12):
        api.post(base, {"name": f"L{i}"})
    with django_assert_max_num_queries(5):
        assert len(api.get(base).json()) == 12
