"""Postings racing across a monitor's threshold on PostgreSQL: the monitor fires once per
crossing, however many postings run at once (organizations/monitors.py: what a monitor saw is
changed only under its account's balance lock, which those postings take in turn)."""

from __future__ import annotations

import pytest
from django.db import connection

from outbox.models import Event
from tests.concurrency.conftest import run_threads
from tests.conftest import Api

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="needs PostgreSQL: row locks and concurrent connections",
    ),
]

THREADS = 8
ROUNDS = 3


def test_concurrent_postings_fire_a_monitor_once_per_crossing(book):
    api = book.api
    book.fund("@alice", 16_000)  # 160.00
    body = {
        "accountId": book.accounts["@alice"]["id"],
        "measure": "available",
        "condition": "below",
        "threshold": {"amount": 10_000, "scale": 2},
    }
    monitor = api.post(f"{book.url}/balance-monitors", body)
    assert monitor.status_code == 201, monitor.content
    for round_ in range(ROUNDS):
        # Eight payments of 10.00 at once take @alice from 160.00 to 80.00: one crossing.
        def pay(index, barrier):
            client = Api(api.token)
            barrier.wait()
            variables = {"amount": 1_000, "fee": 0, "source": "@alice", "destination": "@bob"}
            return client.post(
                f"{book.url}/transactions",
                {"transactionTypeCode": "PAYMENT_WITH_FEE", "variables": variables},
            )

        answers = run_threads(THREADS, pay)
        assert [r.status_code for r in answers] == [201] * THREADS
        fired = Event.objects.filter(type="balance_monitor.triggered")
        assert fired.count() == round_ + 1, round_
        # Back above: the monitor clears, and the next round crosses again.
        book.fund("@alice", 8_000)
