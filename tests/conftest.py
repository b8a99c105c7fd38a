"""Shared fixtures: an API client that speaks with a real bearer token, and a ledger to use."""

from __future__ import annotations

import datetime as dt
import os
import time
from typing import Any

import pytest
from django.db import connection, transaction
from django.utils import timezone
from rest_framework.test import APIClient

os.environ.setdefault("LEDGER_DEV_DEFAULTS", "1")
# A checkout's .env (make run) must not change what the tests see, in-process or in the
# subprocesses they start: the suite runs the same from a fresh clone.
os.environ.setdefault("LEDGER_ENV_FILE", "")

from ledgerproject.migration_ops import sql_text, statements
from organizations import services as org_services

# LEDGER_CITUS=1: the database is a Citus coordinator's (DATABASE_URL), made beforehand on every
# node with its test name (scripts/citus-cluster createdb test_<name>, as .ci/run does: Citus
# does not create a database on the workers) and reused (--reuse-db). After the migrations,
# the tables are distributed, as in production.
CITUS = os.environ.get("LEDGER_CITUS") == "1"
# The cluster's own tests (a worker stopped, placements read) need one: collected only then.
collect_ignore = [] if CITUS else ["citus"]


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: Any, django_db_blocker: Any) -> None:
    if CITUS:
        from django.core.management import call_command

        with django_db_blocker.unblock():
            call_command("distribute", verbosity=0)
            connection.close()  # the next session starts with the database's new defaults


@pytest.fixture
def books_left_unbalanced(db: Any) -> Any:
    """For a test that writes money rows past the service: a shortcut to a state (a balance
    set directly) or tampering that ``check_ledger`` must find. The database refuses books that
    break double entry (transactions/sql/double_entry*.sql): SQLite as each row is written, so
    its triggers are dropped for the test; PostgreSQL when the transaction commits, and a
    test's transaction is checked as if it committed when it ends, so this one is rolled back
    unchecked instead. Both are the test's own transaction only: the triggers come back with
    its rollback, and what the test asserts is unchanged."""
    assert connection.in_atomic_block, "a test whose transaction is rolled back (not transactional)"
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            for statement in statements(sql_text("transactions", "double_entry_sqlite.drop.sql")):
                cursor.execute(statement)
    yield
    transaction.set_rollback(True)


class Api:
    """A thin JSON client: ``api.post(path, body)`` returns the response with ``.json()``."""

    def __init__(self, token: str | None) -> None:
        self.token = token
        self.client = APIClient()
        if token is not None:
            self.client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")

    def _call(self, method: str, path: str, body: Any = None, **extra: Any) -> Any:
        kwargs: dict[str, Any] = dict(extra)
        if body is not None and "content_type" not in kwargs:
            kwargs["format"] = "json"
        return getattr(self.client, method)(path, body, **kwargs)

    def get(self, path: str, params: Any = None, **extra: Any) -> Any:
        return self.client.get(path, params, **extra)

    def post(self, path: str, body: Any = None, **extra: Any) -> Any:
        return self._call("post", path, body, **extra)

    def put(self, path: str, body: Any = None, **extra: Any) -> Any:
        return self._call("put", path, body, **extra)

    def patch(self, path: str, body: Any = None, **extra: Any) -> Any:
        return self._call("patch", path, body, **extra)

    def delete(self, path: str, **extra: Any) -> Any:
        return self.client.delete(path, **extra)


def soon(seconds: float = 1.0) -> Any:
    """A moment ``seconds`` from now (an expiry that tests then wait for with ``wait_until``:
    time passes for real, and the books keep the expiry they were given)."""
    return timezone.now() + dt.timedelta(seconds=seconds)


def wait_until(moment: Any) -> None:
    while (left := (moment - timezone.now()).total_seconds()) > 0:
        time.sleep(left + 0.01)


def make_token(name: str = "test", **kwargs: Any) -> str:
    _, raw = org_services.token_create(name=name, **kwargs)
    return raw


@pytest.fixture
def api(db: Any) -> Api:
    return Api(make_token("root"))


@pytest.fixture
def read_only_api(db: Any) -> Api:
    return Api(make_token("reader", read_only=True))


@pytest.fixture
def anon() -> Api:
    return Api(None)


@pytest.fixture
def organization(api: Api) -> dict[str, Any]:
    response = api.post("/v1/organizations", {"legalName": "Acme", "legalDocument": "123"})
    assert response.status_code == 201, response.content
    return response.json()


@pytest.fixture
def ledger(api: Api, organization: dict[str, Any]) -> dict[str, Any]:
    response = api.post(f"/v1/organizations/{organization['id']}/ledgers", {"name": "Main"})
    assert response.status_code == 201, response.content
    return response.json()


@pytest.fixture
def ledger_url(ledger: dict[str, Any]) -> str:
    return f"/v1/organizations/{ledger['organizationId']}/ledgers/{ledger['id']}"


def assert_error(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, (response.status_code, response.content)
    body = response.json()
    assert body["code"] == code, body
    assert body["title"] and body["description"]
    return body


def requires_postgres() -> Any:
    return pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="needs PostgreSQL (row locks and real concurrency)",
    )
