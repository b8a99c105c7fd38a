"""Tokens kept in memory (PostgreSQL): a request under a ledger takes the token from the
process's copy and confirms it with the authentication epoch its ledger statement reads. Every
change to a token, a token's organizations or an organization moves the epoch by trigger, so a
change made anywhere (another process, plain SQL, a queryset update: no signal reaches this
process) applies on the next request. The changes below are made in plain SQL for that
reason."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from organizations.models import ApiToken
from tests.conftest import Api, assert_error, make_token

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="needs PostgreSQL: tokens are kept in memory only there (the epoch's triggers)",
    ),
]


def _sql(statement: str, params: list[object]) -> None:
    with connection.cursor() as cursor:
        cursor.execute(statement, params)


def _token_statements(api: Api, url: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert api.get(url).status_code == 200
    return sum("WHERE t.prefix = " in q["sql"] for q in captured.captured_queries)  # its lookup


@pytest.fixture
def limited(api, organization, ledger_url):
    token = make_token("kept", organization_ids=[organization["id"]])
    client = Api(token)
    assert client.get(f"{ledger_url}/accounts").status_code == 200  # read once, now kept
    return client, ApiToken.objects.get(name="kept")


def test_a_kept_token_is_not_read_again_under_a_ledger(limited, ledger_url):
    client, _ = limited
    assert _token_statements(client, f"{ledger_url}/accounts") == 0


def test_other_views_read_the_token_every_time(limited, organization):
    client, _ = limited
    assert _token_statements(client, f"/v1/organizations/{organization['id']}") == 1


def test_a_token_revoked_elsewhere_fails_on_its_next_request(limited, ledger_url):
    client, token = limited
    _sql("UPDATE organizations_apitoken SET revoked_at = now() WHERE id = %s", [token.pk])
    assert client.get(f"{ledger_url}/accounts").status_code == 401


def test_a_token_deleted_elsewhere_fails_on_its_next_request(limited, ledger_url):
    client, token = limited
    _sql("DELETE FROM organizations_apitoken_organizations WHERE apitoken_id = %s", [token.pk])
    _sql("DELETE FROM organizations_apitoken WHERE id = %s", [token.pk])
    assert client.get(f"{ledger_url}/accounts").status_code == 401


def test_an_organization_taken_from_a_token_elsewhere_is_out_of_reach_at_once(
    limited, api, ledger_url
):
    client, token = limited
    other = api.post("/v1/organizations", {"legalName": "B", "legalDocument": "2"}).json()
    _sql(
        "UPDATE organizations_apitoken_organizations SET organization_id = %s "
        "WHERE apitoken_id = %s",
        [other["id"].replace("-", ""), token.pk],
    )
    assert_error(client.get(f"{ledger_url}/accounts"), 404, "0007")


def test_a_token_made_writable_elsewhere_may_write_at_once(api, organization, ledger_url):
    client = Api(make_token("was-read-only", read_only=True))
    assert client.get(f"{ledger_url}/accounts").status_code == 200  # kept, read-only
    body = {"name": "Retail"}
    assert client.post(f"{ledger_url}/portfolios", body).status_code == 403
    _sql("UPDATE organizations_apitoken SET read_only = false WHERE name = %s", ["was-read-only"])
    response = client.post(f"{ledger_url}/portfolios", body)
    assert response.status_code == 201, response.content


def test_the_epoch_moves_with_every_committed_change_and_never_repeats(transactional_db):
    """Each change below commits on its own; the epoch takes the next value of a sequence, so
    no two are equal (a process that kept a token at one epoch never meets it again)."""

    def epoch() -> int:
        with connection.cursor() as cursor:
            cursor.execute("SELECT value FROM organizations_authepoch WHERE id = 1")
            return cursor.fetchone()[0]

    make_token("epoch")
    seen = [epoch()]
    for statement in (
        "UPDATE organizations_apitoken SET name = name",
        "DELETE FROM organizations_apitoken_organizations",
        "UPDATE organizations_organization SET path = path",
        "DELETE FROM organizations_apitoken",
    ):
        _sql(statement, [])
        seen.append(epoch())
    assert len(set(seen)) == len(seen), seen
