"""The event worker on PostgreSQL, with real concurrent sessions: a slow receiver holds no
transaction (so it hides no event behind the events API's horizon and holds back no VACUUM),
and creates racing each other never pass an organization's bound on subscriptions."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection

from outbox.models import Delivery, WebhookSubscription
from tests.outbox.conftest import organization_with_ledger, subscribe
from tests.outbox.hostile import Hostile

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("fast_worker"),
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="needs PostgreSQL: transaction ids, the events API's horizon, concurrent writers",
    ),
]


def test_a_slow_receiver_hides_no_event_and_holds_back_no_vacuum(api, worker_thread):
    _, ledger_a = organization_with_ledger(api, "A")
    org_b, ledger_b = organization_with_ledger(api, "B")
    with Hostile("hold") as receiver:
        subscribe(api, ledger_a, receiver.url)
        api.post(f"{ledger_a}/portfolios", {"name": "P"})
        worker = worker_thread()
        assert receiver.arrived.wait(10), "the delivery never arrived"
        time.sleep(1.0)
        # The worker has been waiting on the receiver for a second: none of its sessions has
        # been in a transaction for that long (one would hold back the horizon and VACUUM;
        # its short claims, a few milliseconds each, come and go).
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid() AND backend_type = 'client backend' "
                "AND xact_start < now() - interval '0.5 seconds'"
            )
            assert cursor.fetchone()[0] == 0, "a transaction is open during the request"
        api.post(f"{ledger_b}/portfolios", {"name": "Q"})
        deadline = time.monotonic() + 1.0
        while True:  # visible at once, or a claim's few milliseconds later
            seen = api.get(f"{org_b}/events", {"type": "portfolio.created"}).json()
            if seen or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert [e["data"]["name"] for e in seen] == ["Q"]  # not held behind the horizon
        receiver.release.set()
        worker.join(30)
    assert Delivery.objects.get().status == Delivery.SUCCEEDED


def test_racing_creates_never_pass_the_bound(api, settings):
    settings.WEBHOOK_MAX_SUBSCRIPTIONS = 3
    org, _ = organization_with_ledger(api, "A")
    statuses: list[int] = []
    start = threading.Barrier(8)

    def create() -> None:
        try:
            start.wait()
            body = {"url": "https://example.com/hook", "eventTypes": ["*"]}
            statuses.append(api.post(f"{org}/webhooks", body).status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=create) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(statuses) == [201] * 3 + [422] * 5
    assert WebhookSubscription.objects.filter(deleted_at__isnull=True).count() == 3
