"""The transactions' small book, for the event tests; a worker tuned for tests; a port nothing
listens on."""

import io
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection

from tests.conftest import Api
from tests.transactions.conftest import Book, book  # noqa: F401 - the fixture, re-exported

__all__ = ["Book"]


@pytest.fixture
def unused_port() -> int:
    """A port on 127.0.0.1 that was free a moment ago: connecting to it is refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def fast_worker(settings: Any) -> None:
    """Receivers on 127.0.0.1, backoffs of milliseconds, four attempts, no broker."""
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = True
    settings.WEBHOOK_BACKOFF_BASE = 0.001
    settings.WEBHOOK_BACKOFF_MAX = 0.01
    settings.WEBHOOK_MAX_ATTEMPTS = 4
    settings.WEBHOOK_TIMEOUT = 5
    settings.AMQP_URL = ""


def organization_with_ledger(api: Api, name: str) -> tuple[str, str]:
    """(organization url, ledger url) of a new organization with one ledger."""
    org = api.post("/v1/organizations", {"legalName": name, "legalDocument": "1"}).json()
    org_url = f"/v1/organizations/{org['id']}"
    ledger = api.post(f"{org_url}/ledgers", {"name": "Main"}).json()
    return org_url, f"{org_url}/ledgers/{ledger['id']}"


def subscribe(api: Api, url: str, target: str, types: list[str] | None = None) -> Any:
    response = api.post(f"{url}/webhooks", {"url": target, "eventTypes": types or ["*"]})
    assert response.status_code == 201, response.content
    return response.json()


@pytest.fixture
def worker_thread() -> Iterator[Any]:
    """Runs ``deliver_webhooks --once`` in a thread of its own (with its own connection)."""
    threads: list[threading.Thread] = []
    outputs: list[str] = []

    def start() -> threading.Thread:
        def run() -> None:
            try:
                out = io.StringIO()
                call_command("deliver_webhooks", "--once", stdout=out)
                outputs.append(out.getvalue())
            finally:
                connection.close()

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        threads.append(thread)
        return thread

    yield start
    for thread in threads:
        thread.join(60)
        assert not thread.is_alive()
