from tests.conftest import assert_error


def test_it_creates_and_reads_an_organization(api):
    created = api.post("/v1/organizations", {"legalName": "Acme", "legalDocument": "1"})
    assert created.status_code == 201, created.content
    body = created.json()
    got = api.get(f"/v1/organizations/{body['id']}")
    assert got.json() == body


def test_it_refuses_without_token(anon, db):
    assert_error(anon.get("/v1/organizations"), 401, "0041")
