""" "Not yours" and "missing" are one answer, reached by the same queries.

Before: for a token limited to organization A, another tenant's existing ledger answered 404
after one more query than a random id (5.3 ms against 4.8 ms median): a timing oracle telling
which ids exist. Now the token's reach is applied inside the lookup, so both run the same
statements and neither finds a row."""

from __future__ import annotations

import re
import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.conftest import Api, assert_error, make_token


def _shape(sql: str) -> str:
    """A statement with its literal values blanked out (ids, strings, numbers)."""
    sql = re.sub(r"'[^']*'", "?", sql)
    return re.sub(r"\b[0-9a-f]{32}\b|\b\d+\b", "?", sql)


def _statements(api: Api, url: str) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        assert_error(api.get(url), 404, "0007")
    shapes = [_shape(q["sql"]) for q in captured.captured_queries]
    return [s for s in shapes if "WHERE t.prefix = " not in s]  # the token's own lookup


@pytest.fixture
def two_tenants(api):
    def org_with_ledger(name):
        org = api.post("/v1/organizations", {"legalName": name, "legalDocument": "1"}).json()
        ledger = api.post(f"/v1/organizations/{org['id']}/ledgers", {"name": "L"}).json()
        return org["id"], ledger["id"]

    return org_with_ledger("A"), org_with_ledger("B")


@pytest.mark.parametrize("suffix", ["", "/accounts", "/transactions", "/transaction-templates"])
def test_another_tenants_ledger_and_a_random_one_run_the_same_queries(two_tenants, suffix):
    (org_a, _), (org_b, ledger_b) = two_tenants
    limited = Api(make_token("a-only", organization_ids=[org_a]))
    theirs = _statements(limited, f"/v1/organizations/{org_b}/ledgers/{ledger_b}{suffix}")
    random = _statements(
        limited, f"/v1/organizations/{uuid.uuid4()}/ledgers/{uuid.uuid4()}{suffix}"
    )
    assert theirs == random
    assert len(theirs) == 2


def test_another_tenants_organization_and_a_random_one_run_the_same_queries(two_tenants):
    (org_a, _), (org_b, _) = two_tenants
    limited = Api(make_token("a-only", organization_ids=[org_a]))
    theirs = _statements(limited, f"/v1/organizations/{org_b}")
    random = _statements(limited, f"/v1/organizations/{uuid.uuid4()}")
    assert theirs == random
    assert len(theirs) == 1
