"""The delivery worker's steps in-process against a real HTTP receiver on 127.0.0.1: signed
requests, retries with backoff after failures, FAILED after the last attempt, staff's retry,
paused subscriptions, event-type matching and the address guard."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import io
from typing import Any

import pytest
from django.core.management import call_command
from django.utils import timezone

from ledgerproject.errors import LedgerError
from outbox import delivery, webhooks
from outbox.models import Delivery, DeliveryAttempt, Event
from tests.outbox.receiver import Receiver

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_worker")]


def _subscribe(book: Any, url: str, types: list[str], **kw: Any) -> Any:
    response = book.api.post(f"{book.url}/webhooks", {"url": url, "eventTypes": types, **kw})
    assert response.status_code == 201, response.content
    return response.json()


def _drain() -> None:
    """Passes of the worker until nothing is due (backoff waits are milliseconds here)."""
    deadline = timezone.now() + dt.timedelta(seconds=20)
    while timezone.now() < deadline:
        call_command("deliver_webhooks", "--once", stdout=io.StringIO())
        if not Delivery.objects.filter(status=Delivery.PENDING, subscription__status="ACTIVE"):
            return
    raise AssertionError("deliveries still pending")


def verify(secret: str, header: str, body: bytes, tolerance: int = 300) -> bool:
    """The receiver's check, as docs/EVENTS.md shows it."""
    fields = dict(part.split("=", 1) for part in header.split(","))
    expected = hmac.new(
        secret.encode(), fields["t"].encode() + b"." + body, hashlib.sha256
    ).hexdigest()
    fresh = abs(int(timezone.now().timestamp()) - int(fields["t"])) <= tolerance
    return fresh and hmac.compare_digest(expected, fields["v1"])


def test_it_delivers_signed_events_after_failures(book):
    with Receiver(fail_first=2) as receiver:
        hook = _subscribe(book, receiver.url, ["transaction.posted"])
        book.fund("@alice", 1_000)
        paid = book.pay(100, 1).json()
        _drain()
    posted = list(Event.objects.filter(type="transaction.posted").order_by("seq"))
    assert len(posted) == 2
    assert receiver.accepted_events() == {str(e.event_id) for e in posted}
    assert len(receiver.requests) == 6  # two failures then success, for each event
    # Deliveries of different events may arrive in any order (docs/EVENTS.md): the backoff's
    # jitter can land the deposit's last attempt after the payment's. The payment's own last one:
    last = [r for r in receiver.requests if r["event"]["data"]["id"] == paid["id"]][-1]
    assert last["event"]["data"] == paid and last["event"]["type"] == "transaction.posted"
    assert verify(hook["secret"], last["headers"]["Ledger-Signature"], last["body"])
    assert not verify("whsec_wrong", last["headers"]["Ledger-Signature"], last["body"])
    for row in Delivery.objects.all():
        assert row.status == Delivery.SUCCEEDED and row.attempts == 3
        answers = [(a.status_code, a.response_body) for a in row.attempts_made.order_by("number")]
        assert answers == [(500, "not yet"), (500, "not yet"), (200, "thanks")]


def test_it_marks_a_delivery_failed_after_the_last_attempt_and_staff_retry_it(book):
    with Receiver(fail_first=10) as receiver:
        _subscribe(book, receiver.url, ["account.created"])
        book.account("@carol")
        _drain()
        row = Delivery.objects.get()
        assert row.status == Delivery.FAILED and row.attempts == 4
        assert DeliveryAttempt.objects.filter(delivery=row).count() == 4
        assert webhooks.delivery_retry(delivery_ids=[row.pk]) == 1
        receiver.fail_first = 0
        _drain()
    row.refresh_from_db()
    assert row.status == Delivery.SUCCEEDED
    # a retry by staff starts a fresh allowance of attempts
    assert [a.number for a in row.attempts_made.order_by("started_at")] == [1, 2, 3, 4, 1]


def test_backoff_grows_and_is_capped(settings):
    settings.WEBHOOK_BACKOFF_BASE, settings.WEBHOOK_BACKOFF_MAX = 5, 60
    delays = [delivery.backoff(n).total_seconds() for n in range(1, 8)]
    assert 2.5 <= delays[0] <= 5 and 5 <= delays[1] <= 10 and 10 <= delays[2] <= 20
    assert all(30 <= d <= 60 for d in delays[4:])


def test_paused_subscriptions_wait_and_types_and_time_select_events(book):
    with Receiver() as receiver:
        book.account("@before")  # before the subscription: never sent
        hook = _subscribe(book, receiver.url, ["account.created"], status="PAUSED")
        book.account("@carol")
        book.fund("@alice", 5)  # another type: not sent
        _drain()
        assert receiver.requests == []
        book.api.patch(f"{book.url}/webhooks/{hook['id']}", {"status": "ACTIVE"})
        _drain()
    assert [r["event"]["data"]["alias"] for r in receiver.requests] == ["@carol"]


def test_it_refuses_private_addresses_at_delivery_unless_allowed(book, settings):
    with Receiver() as receiver:
        _subscribe(book, receiver.url, ["*"])  # allowed then; refused at registration otherwise
        settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = False
        book.account("@carol")
        call_command("deliver_webhooks", "--once", stdout=io.StringIO())
    assert receiver.requests == []
    attempts = list(DeliveryAttempt.objects.all())
    assert attempts and all(a.status_code is None for a in attempts)
    assert all("non-public address (127.0.0.1)" in a.error for a in attempts)
    with pytest.raises(LedgerError):
        webhooks.check_destination("https://169.254.169.254/latest")
