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

import pytest
from django.core.management import call_command
from django.db import connections
from django.utils import timezone

from outbox import delivery
from outbox.models import Delivery, DeliveryAttempt, Event, WebhookSubscription
from outbox.network import Answer
from outbox.worker import Worker
from tests.conftest import assert_error
from tests.outbox.conftest import organization_with_ledger, subscribe
from tests.outbox.hostile import Hostile
from tests.outbox.receiver import Receiver

pytestmark = pytest.mark.usefixtures("fast_worker")


def _once(*args: str) -> str:
    out = io.StringIO()
    call_command("deliver_webhooks", "--once", *args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db(transaction=True)
def test_no_transaction_is_held_while_a_receiver_is_waited_on(api):
    """The worker runs in this thread; another samples its connection every 10 ms while the
    receiver holds the request for 1.5 s. The worker's short transactions (claims, records)
    come and go, but none lasts while it waits."""
    _, ledger = organization_with_ledger(api, "A")
    worker_connection = connections["default"]  # this thread's wrapper, not the proxy
    samples: list[tuple[float, bool]] = []

    def sample(receiver: Hostile) -> None:
        assert receiver.arrived.wait(10)
        until = time.monotonic() + 1.5
        while time.monotonic() < until:
            samples.append((time.monotonic(), worker_connection.in_atomic_block))
            time.sleep(0.01)
        receiver.release.set()

    with Hostile("hold") as receiver:
        subscribe(api, ledger, receiver.url)
        api.post(f"{ledger}/portfolios", {"name": "P"})
        sampler = threading.Thread(target=sample, args=(receiver,))
        sampler.start()
        _once()
        sampler.join(10)
    assert len(samples) > 50
    longest, began = 0.0, None
    for at, inside in samples:
        began = (began if began is not None else at) if inside else None
        longest = max(longest, at - began) if began is not None else longest
    assert longest < 0.5, f"a transaction stayed open {longest:.2f} s during the request"
    assert Delivery.objects.get().status == Delivery.SUCCEEDED


@pytest.mark.django_db(transaction=True)
def test_one_organizations_hanging_receivers_do_not_delay_another(api, settings, worker_thread):
    settings.WEBHOOK_TIMEOUT = 2
    settings.WEBHOOK_MAX_ATTEMPTS = 1
    _, ledger_a = organization_with_ledger(api, "A")
    _, ledger_b = organization_with_ledger(api, "B")
    with Hostile("hang") as hanging, Hostile("ok") as fine:
        for _ in range(6):
            subscribe(api, ledger_a, hanging.url)
        subscribe(api, ledger_b, fine.url)
        api.post(f"{ledger_a}/portfolios", {"name": "first"})  # A's six deliveries come first
        api.post(f"{ledger_b}/portfolios", {"name": "second"})
        started = time.monotonic()
        worker = worker_thread()
        assert fine.arrived.wait(10)
        waited = fine.arrivals[0][0] - started
        worker.join(30)
        took = time.monotonic() - started
    assert waited < 1.5, f"B waited {waited:.1f} s behind A's receivers"  # A's take 2 s
    cap = settings.WEBHOOK_CONCURRENCY_PER_ORGANIZATION
    first_round = [t for t, _ in hanging.arrivals if t - started < 1.5]
    assert len(first_round) == cap  # at most that many of A's at once
    assert len(hanging.arrivals) == 6 and 3.9 <= took < 12  # two rounds of the 2 s deadline
    failed = DeliveryAttempt.objects.filter(delivery__subscription__url=hanging.url)
    assert failed.count() == 6
    assert all(a.error == "Timed out: no complete answer within 2 s." for a in failed)
    assert all(a.duration_ms < 3500 for a in failed)


@pytest.mark.django_db
def test_a_subscription_that_keeps_failing_is_suspended_without_holding_up_others(api, settings):
    settings.WEBHOOK_SUSPEND_AFTER = 2
    settings.WEBHOOK_BACKOFF_BASE = settings.WEBHOOK_BACKOFF_MAX = 60
    settings.WEBHOOK_CONCURRENCY = 1
    org, ledger = organization_with_ledger(api, "A")
    with Receiver(fail_first=100) as broken, Receiver() as healthy:
        hook = subscribe(api, ledger, broken.url)
        subscribe(api, ledger, healthy.url)
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
    _, ledger = organization_with_ledger(api, "A")
    with Receiver() as receiver:
        subscribe(api, ledger, receiver.url)
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
    org, ledger = organization_with_ledger(api, "A")
    with Receiver(fail_first=1) as receiver:
        hook = subscribe(api, ledger, receiver.url)
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
    _, ledger = organization_with_ledger(api, "A")
    health = tmp_path / "health.json"
    with Receiver() as receiver:
        subscribe(api, ledger, receiver.url)
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
    org, ledger = organization_with_ledger(api, "A")
    _, other = organization_with_ledger(api, "B")
    target = "https://example.com/hook"
    hooks = [subscribe(api, org, target), subscribe(api, ledger, target)]
    hooks.append(subscribe(api, ledger, target))
    refused = api.post(f"{ledger}/webhooks", {"url": target, "eventTypes": ["*"]})
    body = assert_error(refused, 422, "0121")
    assert "at most 3 webhook subscriptions" in body["description"]
    subscribe(api, other, target)  # another organization's count is its own
    assert api.delete(f"{org}/webhooks/{hooks[0]['id']}").status_code == 204
    subscribe(api, org, target)  # a deleted one frees its place
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
    org, _ = organization_with_ledger(api, "A")
    body = assert_error(api.post(f"{org}/webhooks", {"url": url, "eventTypes": ["*"]}), 400,
                        "0120")  # fmt: skip
    assert "non-public address" in body["fields"]["url"]
    hook = subscribe(api, org, "https://hooks.example.invalid/x")  # does not resolve: later
    assert_error(api.patch(f"{org}/webhooks/{hook['id']}", {"url": url}), 400, "0120")
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = True
    subscribe(api, org, url)


@pytest.mark.django_db
def test_a_stopping_worker_starts_nothing_new(api):
    """After SIGTERM the worker only waits for the attempts in flight: it dispatches, claims and
    publishes nothing more."""
    _, ledger = organization_with_ledger(api, "A")
    with Receiver() as receiver:
        subscribe(api, ledger, receiver.url)
        api.post(f"{ledger}/portfolios", {"name": "P"})
        worker = Worker()
        worker.stopping = True
        try:
            assert worker.turn() is False
        finally:
            worker.close()
        assert receiver.requests == []
    assert not Delivery.objects.exists()
