"""The event worker against hostile receivers and a broker that is down, in-process, on real
sockets on 127.0.0.1: no transaction open while a receiver is waited on, one organization's
hanging receivers not delaying another's, a subscription that keeps failing suspended, an
attempt whose worker died recovered and counted, the subscriptions of an organization bounded,
private addresses refused at registration, and a summary that says what happened."""

from __future__ import annotations

import datetime as dt
import io
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from outbox import delivery, network
from outbox.models import Delivery, DeliveryAttempt, Event, WebhookSubscription
from outbox.network import Answer
from tests.conftest import Api, assert_error
from tests.outbox.hostile import Hostile
from tests.outbox.receiver import Receiver

pytestmark = pytest.mark.usefixtures("fast_worker")


def _organization(api: Api, name: str) -> tuple[str, str]:
    """(organization url, ledger url) of a new organization with one ledger."""
    org = api.post("/v1/organizations", {"legalName": name, "legalDocument": "1"}).json()
    org_url = f"/v1/organizations/{org['id']}"
    ledger = api.post(f"{org_url}/ledgers", {"name": "Main"}).json()
    return org_url, f"{org_url}/ledgers/{ledger['id']}"


def _subscribe(api: Api, url: str, target: str, types: list[str] | None = None) -> Any:
    response = api.post(f"{url}/webhooks", {"url": target, "eventTypes": types or ["*"]})
    assert response.status_code == 201, response.content
    return response.json()


def _once(*args: str) -> str:
    out = io.StringIO()
    call_command("deliver_webhooks", "--once", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def worker_thread() -> Iterator[Any]:
    """Runs ``deliver_webhooks --once`` in a thread of its own (with its own connection)."""
    threads: list[threading.Thread] = []
    outputs: list[str] = []

    def start() -> threading.Thread:
        def run() -> None:
            try:
                outputs.append(_once())
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


@pytest.mark.django_db(transaction=True)
def test_no_transaction_is_open_while_a_receiver_is_waited_on(api, monkeypatch):
    _, ledger = _organization(api, "A")
    worker_connection = connection  # the worker runs in this thread, on this connection
    seen: list[tuple[bool, bool]] = []
    send = network.post

    def watched(*args: Any, **kwargs: Any) -> Answer:
        seen.append((worker_connection.in_atomic_block, worker_connection.get_autocommit()))
        return send(*args, **kwargs)

    monkeypatch.setattr(network, "post", watched)
    with Receiver(fail_first=1) as receiver:
        _subscribe(api, ledger, receiver.url)
        api.post(f"{ledger}/portfolios", {"name": "P"})
        _once()
    assert len(receiver.requests) == 2
    assert seen == [(False, True), (False, True)]  # no atomic block, autocommit: no transaction


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="needs PostgreSQL: the events API's horizon rests on its transaction ids",
)
def test_a_slow_receiver_hides_no_event_and_holds_back_no_vacuum(api, worker_thread):
    _, ledger_a = _organization(api, "A")
    org_b, ledger_b = _organization(api, "B")
    with Hostile("hold") as receiver:
        _subscribe(api, ledger_a, receiver.url)
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
                "AND pid <> pg_backend_pid() AND xact_start < now() - interval '0.5 seconds'"
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


@pytest.mark.django_db(transaction=True)
def test_one_organizations_hanging_receivers_do_not_delay_another(api, settings, worker_thread):
    settings.WEBHOOK_TIMEOUT = 2
    settings.WEBHOOK_MAX_ATTEMPTS = 1
    _, ledger_a = _organization(api, "A")
    _, ledger_b = _organization(api, "B")
    with Hostile("hang") as hanging, Hostile("ok") as fine:
        for _ in range(6):
            _subscribe(api, ledger_a, hanging.url)
        _subscribe(api, ledger_b, fine.url)
        api.post(f"{ledger_a}/portfolios", {"name": "first"})  # A's six deliveries come first
        api.post(f"{ledger_b}/portfolios", {"name": "second"})
        started = time.monotonic()
        worker = worker_thread()
        assert fine.arrived.wait(10)
        waited = fine.arrivals[0][0] - started
        worker.join(30)
        took = time.monotonic() - started
    assert waited < 1.0, f"B waited {waited:.1f} s behind A's receivers"
    cap = settings.WEBHOOK_CONCURRENCY_PER_ORGANIZATION
    first_round = [t for t, _ in hanging.arrivals if t - started < 1.0]
    assert len(first_round) == cap  # at most that many of A's at once
    assert len(hanging.arrivals) == 6 and 4 <= took < 8  # two rounds of the 2 s deadline
    failed = DeliveryAttempt.objects.filter(delivery__subscription__url=hanging.url)
    assert failed.count() == 6
    assert all(a.error == "Timed out: no complete answer within 2 s." for a in failed)
    assert all(a.duration_ms < 2500 for a in failed)


@pytest.mark.django_db
def test_a_subscription_that_keeps_failing_is_suspended_without_holding_up_others(api, settings):
    settings.WEBHOOK_SUSPEND_AFTER = 2
    settings.WEBHOOK_BACKOFF_BASE = settings.WEBHOOK_BACKOFF_MAX = 60
    settings.WEBHOOK_CONCURRENCY = 1
    org, ledger = _organization(api, "A")
    with Receiver(fail_first=100) as broken, Receiver() as healthy:
        hook = _subscribe(api, ledger, broken.url)
        _subscribe(api, ledger, healthy.url)
        for index in range(5):
            api.post(f"{ledger}/portfolios", {"name": f"P{index}"})
        output = _once()
    assert len(broken.requests) == 2  # then suspended: its other deliveries wait
    assert len(healthy.requests) == 5
    assert "5 sent, 2 failed, 0 refused, 2 to retry" in output
    shown = api.get(f"{org}/webhooks/{hook['id']}").json()
    assert shown["consecutiveFailures"] == 2 and shown["suspendedUntil"] is not None
    assert shown["lastError"] == "The receiver answered 500: not yet"
    assert shown["lastErrorAt"] is not None
    resumed = api.patch(f"{org}/webhooks/{hook['id']}", {"status": "ACTIVE"}).json()
    assert resumed["suspendedUntil"] is None and resumed["consecutiveFailures"] == 0
    assert resumed["lastError"] == "The receiver answered 500: not yet"  # kept for the record


@pytest.mark.django_db
def test_an_attempt_whose_worker_died_is_recovered_and_counted_as_failed(api, settings):
    settings.WEBHOOK_MAX_ATTEMPTS = 3
    _, ledger = _organization(api, "A")
    with Receiver() as receiver:
        _subscribe(api, ledger, receiver.url)
        api.post(f"{ledger}/portfolios", {"name": "P"})
        delivery.fan_out()
        for attempt in (1, 2, 3):
            # A worker claims the attempt and dies in it (as one killed by an answer too big
            # for its memory would); its lease lapses.
            claim = delivery.claim()
            assert claim is not None
            assert delivery.claim() is None  # leased: nobody else takes it meanwhile
            Delivery.objects.update(leased_until=timezone.now() - dt.timedelta(seconds=1))
            if attempt < 3:
                assert delivery.recover() == 1
                Delivery.objects.update(next_attempt_at=timezone.now())
            else:
                output = _once()  # the worker's turn recovers it too
                assert "1 recovered from a stopped worker" in output
            assert delivery.record(claim, Answer(status_code=200)) is None  # too late
    row = Delivery.objects.get()
    assert row.status == Delivery.FAILED and row.attempts == 3
    errors = list(row.attempts_made.values_list("error", flat=True))
    assert errors == ["No outcome was recorded: the worker stopped during the attempt "
                      "(its lease lapsed)."] * 3  # fmt: skip
    assert receiver.requests == []


@pytest.mark.django_db
def test_the_summary_counts_sent_failed_refused_and_retried(api, settings):
    org, ledger = _organization(api, "A")
    with Receiver(fail_first=1) as receiver:
        hook = _subscribe(api, ledger, receiver.url)
        api.post(f"{ledger}/portfolios", {"name": "P"})
        output = _once()
        assert output.strip() == (
            "deliver_webhooks: 3 events dispatched; deliveries: 1 sent, 1 failed, 0 refused, "
            "1 to retry; RabbitMQ not configured."
        )
        settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = False  # the receiver is on 127.0.0.1
        api.post(f"{ledger}/portfolios", {"name": "Q"})
        settings.WEBHOOK_MAX_ATTEMPTS = 1
        output = _once()
    assert "1 events dispatched; deliveries: 0 sent, 0 failed, 1 refused, 0 to retry" in output
    refused = DeliveryAttempt.objects.filter(status_code__isnull=True).get()
    message = "Not sent: the host resolves to a non-public address (127.0.0.1)."
    assert refused.error == message and len(receiver.requests) == 2
    shown = api.get(f"{org}/webhooks/{hook['id']}").json()
    assert shown["lastError"] == message and shown["consecutiveFailures"] == 1


@pytest.mark.django_db
def test_a_broker_that_is_down_stops_no_webhook(api, settings, tmp_path, unused_port):
    settings.AMQP_URL = f"amqp://guest:guest@127.0.0.1:{unused_port}/%2F"
    _, ledger = _organization(api, "A")
    health = tmp_path / "health.json"
    with Receiver() as receiver:
        _subscribe(api, ledger, receiver.url)
        for index in range(3):
            api.post(f"{ledger}/portfolios", {"name": f"P{index}"})
        output = _once("--health-file", str(health))
    assert len(receiver.requests) == 3
    assert "3 sent" in output and "0 events published to RabbitMQ (RabbitMQ unreachable" in output
    state = json.loads(health.read_text())
    assert state["broker"]["state"] == "down" and state["broker"]["lastError"]
    assert state["counts"]["sent"] == 3 and state["inFlight"] == 0
    assert not Event.objects.filter(published_at__isnull=False).exists()  # all left to publish


@pytest.mark.django_db
def test_subscriptions_of_an_organization_are_bounded(api, settings):
    settings.WEBHOOK_MAX_SUBSCRIPTIONS = 3
    org, ledger = _organization(api, "A")
    _, other = _organization(api, "B")
    target = "https://example.com/hook"
    hooks = [_subscribe(api, org, target), _subscribe(api, ledger, target)]
    hooks.append(_subscribe(api, ledger, target))
    refused = api.post(f"{ledger}/webhooks", {"url": target, "eventTypes": ["*"]})
    body = assert_error(refused, 422, "0121")
    assert "at most 3 webhook subscriptions" in body["description"]
    _subscribe(api, other, target)  # another organization's count is its own
    assert api.delete(f"{org}/webhooks/{hooks[0]['id']}").status_code == 204
    _subscribe(api, org, target)  # a deleted one frees its place
    assert WebhookSubscription.objects.filter(deleted_at__isnull=True).count() == 4


@pytest.mark.django_db
@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:9/x",
        "http://localhost/x",
        "https://169.254.169.254/latest/meta-data",
        "http://[::1]/x",
        "http://[::ffff:127.0.0.1]/x",
        "http://[::127.0.0.1]/x",
        "http://[64:ff9b::a9fe:a9fe]/x",
        "http://[2002:a9fe:a9fe::1]/x",
        "http://10.0.0.8/x",
    ],
)
def test_private_addresses_are_refused_at_registration(api, settings, url):
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = False
    org, _ = _organization(api, "A")
    body = assert_error(api.post(f"{org}/webhooks", {"url": url, "eventTypes": ["*"]}), 400,
                        "0120")  # fmt: skip
    assert "non-public address" in body["fields"]["url"]
    hook = _subscribe(api, org, "https://hooks.example.invalid/x")  # does not resolve: later
    assert_error(api.patch(f"{org}/webhooks/{hook['id']}", {"url": url}), 400, "0120")
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = True
    _subscribe(api, org, url)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(
    connection.vendor != "postgresql", reason="needs PostgreSQL: real concurrent writers"
)
def test_racing_creates_never_pass_the_bound(api, settings):
    settings.WEBHOOK_MAX_SUBSCRIPTIONS = 3
    org, _ = _organization(api, "A")
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
