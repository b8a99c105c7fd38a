"""The transactions' small book, for the event tests; a worker tuned for tests; a port nothing
listens on."""

import socket
from typing import Any

import pytest

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
