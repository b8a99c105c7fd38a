"""Organizations: the specification's table and rules, plus the decisions of docs/API.md."""

from __future__ import annotations

import re

from tests.conftest import assert_error

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+0000$")
FULL = {
    "legalName": "Acme Ltd",
    "legalDocument": "12.345.678/0001-90",
    "doingBusinessAs": "Acme",
    "address": {
        "line1": "1 Main St",
        "line2": None,
        "zipCode": "01000",
        "city": "Sao Paulo",
        "state": "SP",
        "country": "BR",
    },
    "status": {"code": "ACTIVE", "description": "open"},
    "metadata": {"segment": "retail", "tier": 2, "vip": True},
}


def test_it_creates_an_organization_with_every_field(api):
    response = api.post("/v1/organizations", FULL)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["legalName"] == "Acme Ltd"
    assert body["address"]["country"] == "BR"
    assert body["status"] == {"code": "ACTIVE", "description": "open"}
    assert body["metadata"] == FULL["metadata"]
    assert body["parentOrganizationId"] is None
    assert body["deletedAt"] is None
    assert TIMESTAMP.match(body["createdAt"]) and TIMESTAMP.match(body["updatedAt"])


def test_it_defaults_the_status_to_active(api):
    body = api.post("/v1/organizations", {"legalName": "A", "legalDocument": "1"}).json()
    assert body["status"] == {"code": "ACTIVE", "description": None}
    assert body["metadata"] == {}


def test_it_names_missing_fields_with_0009(api):
    body = assert_error(api.post("/v1/organizations", {"legalName": "A"}), 400, "0009")
    assert "legalDocument" in body["fields"]


def test_it_refuses_unknown_fields_with_0053(api):
    body = assert_error(
        api.post("/v1/organizations", {"legalName": "A", "legalDocument": "1", "x": 1}), 400, "0053"
    )
    assert body["fields"] == {"x": "unexpected field"}


def test_it_refuses_wrong_types_with_0047(api):
    assert_error(
        api.post("/v1/organizations", {"legalName": ["A"], "legalDocument": "1"}), 400, "0047"
    )
    assert_error(
        api.post("/v1/organizations", {"legalName": "A", "legalDocument": "1", "status": "x"}),
        400,
        "0047",
    )


def test_it_checks_the_country_code(api):
    bad = {**FULL, "address": {**FULL["address"], "country": "XX"}}
    assert_error(api.post("/v1/organizations", bad), 400, "0032")
    lower = {**FULL, "address": {**FULL["address"], "country": "br"}}
    assert_error(api.post("/v1/organizations", lower), 400, "0032")


def test_it_validates_metadata(api):
    base = {"legalName": "A", "legalDocument": "1"}
    assert_error(api.post("/v1/organizations", {**base, "metadata": {"k" * 101: "v"}}), 400, "0050")
    assert_error(
        api.post("/v1/organizations", {**base, "metadata": {"k": "v" * 2001}}), 400, "0051"
    )
    assert_error(api.post("/v1/organizations", {**base, "metadata": {"k": {"n": 1}}}), 400, "0067")
    assert_error(api.post("/v1/organizations", {**base, "metadata": {"k": [1]}}), 400, "0067")
    assert_error(api.post("/v1/organizations", {**base, "metadata": {"k": None}}), 400, "0047")


def test_it_links_a_parent_and_refuses_an_unknown_one(api, organization):
    child = api.post(
        "/v1/organizations",
        {"legalName": "C", "legalDocument": "2", "parentOrganizationId": organization["id"]},
    )
    assert child.status_code == 201
    assert child.json()["parentOrganizationId"] == organization["id"]
    assert_error(
        api.post(
            "/v1/organizations",
            {
                "legalName": "C",
                "legalDocument": "2",
                "parentOrganizationId": "00000000-0000-0000-0000-000000000000",
            },
        ),
        422,
        "0039",
    )


def test_it_updates_and_replaces_metadata(api):
    org = api.post("/v1/organizations", FULL).json()
    url = f"/v1/organizations/{org['id']}"
    response = api.patch(url, {"legalName": "New", "metadata": {"only": "this"}})
    assert response.status_code == 200
    body = response.json()
    assert body["legalName"] == "New"
    assert body["metadata"] == {"only": "this"}
    assert body["doingBusinessAs"] == "Acme"
    assert api.get(url).json() == body


def test_it_refuses_to_change_the_legal_document_or_timestamps(api, organization):
    url = f"/v1/organizations/{organization['id']}"
    assert_error(api.patch(url, {"legalDocument": "999"}), 400, "0006")
    assert_error(api.patch(url, {"createdAt": "2020-01-01T00:00:00+0000"}), 400, "0006")
    other_id = "0190f0a0-0000-7000-8000-000000000000"
    assert_error(api.patch(url, {"id": other_id}), 400, "0006")
    # Its own id sent back is no change, hence no error (tests/api/test_unchanged_fields.py).
    assert api.patch(url, {"id": organization["id"]}).status_code == 200


def test_it_accepts_both_spellings_of_the_parent_field(api, organization):
    a = api.post("/v1/organizations", {"legalName": "A", "legalDocument": "2"}).json()
    b = api.post("/v1/organizations", {"legalName": "B", "legalDocument": "3"}).json()
    url = f"/v1/organizations/{a['id']}"
    assert (
        api.patch(url, {"parentOrganizationId": organization["id"]}).json()["parentOrganizationId"]
        == organization["id"]
    )
    assert (
        api.patch(url, {"parentOganizationId": b["id"]}).json()["parentOrganizationId"] == b["id"]
    )
    assert api.patch(url, {"parentOrganizationId": None}).json()["parentOrganizationId"] is None


def test_it_refuses_a_parent_cycle(api, organization):
    child = api.post(
        "/v1/organizations",
        {"legalName": "C", "legalDocument": "2", "parentOrganizationId": organization["id"]},
    ).json()
    grandchild = api.post(
        "/v1/organizations",
        {"legalName": "G", "legalDocument": "3", "parentOrganizationId": child["id"]},
    ).json()
    url = f"/v1/organizations/{organization['id']}"
    assert_error(api.patch(url, {"parentOrganizationId": grandchild["id"]}), 422, "0008")
    assert_error(api.patch(url, {"parentOrganizationId": organization["id"]}), 422, "0008")


def test_it_moves_a_subtree_with_its_descendants(api, organization):
    from tests.conftest import Api, make_token

    a = api.post("/v1/organizations", {"legalName": "A", "legalDocument": "2"}).json()
    a_child = api.post(
        "/v1/organizations",
        {"legalName": "AC", "legalDocument": "3", "parentOrganizationId": a["id"]},
    ).json()
    api.patch(f"/v1/organizations/{a['id']}", {"parentOrganizationId": organization["id"]})
    limited = Api(make_token("lim", organization_ids=[organization["id"]]))
    assert limited.get(f"/v1/organizations/{a_child['id']}").status_code == 200


def test_it_soft_deletes_and_keeps_listing(api, organization):
    url = f"/v1/organizations/{organization['id']}"
    assert api.delete(url).status_code == 204
    body = api.get(url).json()
    assert body["deletedAt"] is not None
    assert organization["id"] in {o["id"] for o in api.get("/v1/organizations").json()}
    assert organization["id"] not in {
        o["id"] for o in api.get("/v1/organizations", {"deleted": "false"}).json()
    }
    assert_error(api.delete(url), 400, "0013")
    assert_error(api.patch(url, {"legalName": "x"}), 400, "0013")


def test_it_refuses_to_delete_an_organization_with_ledgers_or_children(api, organization):
    url = f"/v1/organizations/{organization['id']}"
    ledger = api.post(f"{url}/ledgers", {"name": "L"}).json()
    assert_error(api.delete(url), 422, "0008")
    api.delete(f"{url}/ledgers/{ledger['id']}")
    child = api.post(
        "/v1/organizations",
        {"legalName": "C", "legalDocument": "2", "parentOrganizationId": organization["id"]},
    ).json()
    assert_error(api.delete(url), 422, "0008")
    api.delete(f"/v1/organizations/{child['id']}")
    assert api.delete(url).status_code == 204


def test_it_filters_organizations_by_metadata(api):
    api.post(
        "/v1/organizations",
        {"legalName": "A", "legalDocument": "1", "metadata": {"k": "a", "n": 2, "b": True}},
    )
    api.post("/v1/organizations", {"legalName": "B", "legalDocument": "2", "metadata": {"k": "b"}})
    names = [o["legalName"] for o in api.get("/v1/organizations", {"metadata.k": "b"}).json()]
    assert names == ["B"]
    names = [o["legalName"] for o in api.get("/v1/organizations", {"metadata": "k:a"}).json()]
    assert names == ["A"]
    both = api.get("/v1/organizations", {"metadata.n": "2", "metadata.b": "true"}).json()
    assert [o["legalName"] for o in both] == ["A"]
    assert_error(api.get("/v1/organizations", {"metadata": "nocolon"}), 400, "0082")


def test_it_lists_with_a_constant_number_of_queries(api, django_assert_max_num_queries):
    for i in range(15):
        api.post("/v1/organizations", {"legalName": f"O{i}", "legalDocument": str(i)})
    with django_assert_max_num_queries(4):
        assert len(api.get("/v1/organizations").json()) == 15


def test_a_patched_address_is_sent_whole(api):
    """A PATCH replaces the address, which names its country: one without it is refused as on
    create (the schema says so), and the stored address keeps its country; ``{}`` is none, as
    an organization without an address is answered. Found by the schema fuzz run: a PATCH of
    an address with no country was answered 200 and stored."""
    org = api.post("/v1/organizations", FULL).json()
    url = f"/v1/organizations/{org['id']}"
    no_country = {k: v for k, v in FULL["address"].items() if k != "country"}
    body = assert_error(api.patch(url, {"address": no_country}), 400, "0009")
    assert "address.country" in body["fields"]
    assert api.get(url).json()["address"]["country"] == "BR"
    moved = {**no_country, "city": "Rio", "country": "BR"}
    assert api.patch(url, {"address": moved}).json()["address"]["city"] == "Rio"
    assert api.patch(url, {"address": {}}).json()["address"] == {}  # none, as answered
    bare = api.post("/v1/organizations", {**FULL, "address": {}}).json()
    assert bare["address"] == {}
