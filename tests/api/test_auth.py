"""Every authentication and authorization case, through the HTTP API."""

from __future__ import annotations

import datetime as dt

from django.utils import timezone

from organizations.models import ApiToken
from organizations.tokens import hash_secret
from tests.conftest import Api, assert_error, make_token


def test_it_answers_401_0041_without_a_token(anon, db):
    response = anon.get("/v1/organizations")
    assert_error(response, 401, "0041")
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_it_answers_401_0042_for_unknown_and_malformed_tokens(db):
    for header in ["Bearer nope", "Bearer lgr_aaaaaaaaaaaa_bbbb", "Basic abc", "Bearer"]:
        api = Api(None)
        api.client.credentials(HTTP_AUTHORIZATION=header)
        assert_error(api.get("/v1/organizations"), 401, "0042")


def test_it_answers_401_0042_for_a_right_prefix_with_a_wrong_secret(db):
    raw = make_token("t")
    assert_error(Api(raw[:-2] + "xx").get("/v1/organizations"), 401, "0042")


def test_it_answers_401_0042_for_revoked_and_expired_tokens(db):
    revoked = make_token("revoked")
    ApiToken.objects.filter(name="revoked").update(revoked_at=timezone.now())
    assert_error(Api(revoked).get("/v1/organizations"), 401, "0042")
    expired = make_token("expired", expires_in_days=1)
    ApiToken.objects.filter(name="expired").update(
        expires_at=timezone.now() - dt.timedelta(seconds=1)
    )
    assert_error(Api(expired).get("/v1/organizations"), 401, "0042")


def test_it_stores_only_a_hash_of_the_token(db):
    raw = make_token("hashed")
    row = ApiToken.objects.values().get(name="hashed")
    assert raw not in str(row)
    assert row["secret_hash"] == hash_secret(raw)


def test_it_refuses_writes_with_a_read_only_token(api, organization):
    reader = Api(make_token("reader", read_only=True))
    assert reader.get(f"/v1/organizations/{organization['id']}").status_code == 200
    assert_error(
        reader.post("/v1/organizations", {"legalName": "x", "legalDocument": "y"}), 403, "0043"
    )
    assert_error(
        reader.patch(f"/v1/organizations/{organization['id']}", {"legalName": "z"}), 403, "0043"
    )
    assert_error(reader.delete(f"/v1/organizations/{organization['id']}"), 403, "0043")


def test_it_keeps_a_limited_token_inside_its_organizations(api, organization):
    other = api.post("/v1/organizations", {"legalName": "Other", "legalDocument": "2"}).json()
    child = api.post(
        "/v1/organizations",
        {"legalName": "Child", "legalDocument": "3", "parentOrganizationId": organization["id"]},
    ).json()
    ledger = api.post(f"/v1/organizations/{other['id']}/ledgers", {"name": "L"}).json()
    limited = Api(make_token("limited", organization_ids=[organization["id"]]))

    listed = {o["id"] for o in limited.get("/v1/organizations").json()}
    assert listed == {organization["id"], child["id"]}
    assert limited.get(f"/v1/organizations/{child['id']}").status_code == 200
    for path in [
        f"/v1/organizations/{other['id']}",
        f"/v1/organizations/{other['id']}/ledgers",
        f"/v1/organizations/{other['id']}/ledgers/{ledger['id']}",
    ]:
        assert_error(limited.get(path), 404, "0007")
    assert_error(limited.patch(f"/v1/organizations/{other['id']}", {"legalName": "x"}), 404, "0007")
    assert_error(limited.delete(f"/v1/organizations/{other['id']}"), 404, "0007")
    assert_error(
        limited.post(f"/v1/organizations/{other['id']}/ledgers", {"name": "x"}), 404, "0007"
    )
    assert api.get(f"/v1/organizations/{other['id']}").json()["legalName"] == "Other"


def test_a_limited_token_reaches_the_ledgers_of_its_organizations_subtrees(api, organization):
    """The ledger's path is resolved in one statement that reads the token's organizations
    (``selectors.ledger_lookup``): a ledger of its organization and of a child's is found, one of
    another organization is not (a path ends with ``/``, so no organization's path begins with
    another's unless it is a descendant)."""
    child = api.post(
        "/v1/organizations",
        {"legalName": "Child", "legalDocument": "3", "parentOrganizationId": organization["id"]},
    ).json()
    other = api.post("/v1/organizations", {"legalName": "Other", "legalDocument": "2"}).json()
    ledgers = {
        name: api.post(f"/v1/organizations/{org['id']}/ledgers", {"name": name}).json()
        for name, org in (("own", organization), ("child", child), ("other", other))
    }
    limited = Api(make_token("limited", organization_ids=[organization["id"]]))
    for name in ("own", "child"):
        ledger = ledgers[name]
        url = f"/v1/organizations/{ledger['organizationId']}/ledgers/{ledger['id']}"
        assert limited.get(url).json()["id"] == ledger["id"]
        assert limited.get(f"{url}/accounts").status_code == 200
    ledger = ledgers["other"]
    url = f"/v1/organizations/{other['id']}/ledgers/{ledger['id']}"
    assert_error(limited.get(f"{url}/accounts"), 404, "0007")


def test_it_lets_only_an_unlimited_token_create_a_top_level_organization(api, organization):
    limited = Api(make_token("limited", organization_ids=[organization["id"]]))
    assert_error(
        limited.post("/v1/organizations", {"legalName": "T", "legalDocument": "9"}), 403, "0043"
    )
    created = limited.post(
        "/v1/organizations",
        {"legalName": "Sub", "legalDocument": "9", "parentOrganizationId": organization["id"]},
    )
    assert created.status_code == 201
    outsider = api.post("/v1/organizations", {"legalName": "Out", "legalDocument": "8"}).json()
    assert_error(
        limited.post(
            "/v1/organizations",
            {"legalName": "S", "legalDocument": "7", "parentOrganizationId": outsider["id"]},
        ),
        422,
        "0039",
    )


def test_it_never_accepts_a_session_cookie(db, django_user_model, client):
    django_user_model.objects.create_superuser("boss", "b@example.com", "pw-123456789")
    client.login(username="boss", password="pw-123456789")
    response = client.get("/v1/organizations")
    assert_error(response, 401, "0041")
