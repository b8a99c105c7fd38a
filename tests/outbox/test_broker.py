"""Publishing events to the real RabbitMQ on 127.0.0.1:5672 (guest/guest): a durable exchange,
persistent messages with the event id, confirms, and an event marked published only once the
broker confirmed it. These tests need the broker: ``.ci/run`` makes sure it runs, and they fail
(never skip) when it does not answer."""

from __future__ import annotations

import io
import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pika
import pytest
from django.core.management import call_command
from django.utils import timezone

from outbox import broker
from outbox.models import Event, Lease
from outbox.worker import Worker
from tests.outbox.hostile import Forwarder

pytestmark = pytest.mark.django_db

AMQP_URL = "amqp://guest:guest@127.0.0.1:5672/%2F"


@pytest.fixture
def exchange() -> Iterator[tuple[str, Any, str]]:
    """A fresh exchange name, a channel of our own and a queue bound to every event type."""
    name = f"ledger.events.test.{uuid.uuid4().hex[:8]}"
    try:
        conn = pika.BlockingConnection(pika.URLParameters(AMQP_URL))
    except pika.exceptions.AMQPConnectionError as error:
        pytest.fail(f"RabbitMQ is not reachable on 127.0.0.1:5672 ({error}); .ci/run starts it")
    channel = conn.channel()
    channel.exchange_declare(name, exchange_type="topic", durable=True)
    queue = channel.queue_declare("", exclusive=True).method.queue
    channel.queue_bind(queue, name, routing_key="#")
    yield name, channel, queue
    channel.exchange_delete(name)
    conn.close()


def _received(channel: Any, queue: str) -> list[tuple[Any, dict[str, Any]]]:
    out = []
    while True:
        method, properties, body = channel.basic_get(queue, auto_ack=True)
        if method is None:
            return out
        out.append((properties, json.loads(body)))


def test_it_publishes_every_event_once_confirmed(book, exchange):
    name, channel, queue = exchange
    Event.objects.update(published_at=None)
    target = broker.Publisher(AMQP_URL, name)
    try:
        book.fund("@alice", 10)
        count = Event.objects.count()
        assert broker.publish_pending(target, batch=1000) == count
        assert broker.publish_pending(target) == 0
    finally:
        target.close()
    assert not Event.objects.filter(published_at__isnull=True).exists()
    messages = _received(channel, queue)
    ordered = list(Event.objects.order_by("xid", "seq"))
    assert [body["id"] for _, body in messages] == [str(e.event_id) for e in ordered]
    properties, body = messages[-1]
    assert body["type"] == "transaction.posted" and body["data"]["amount"]["amount"] == 10
    assert properties.delivery_mode == 2 and properties.message_id == body["id"]
    assert properties.content_type == "application/json"


def test_nothing_is_marked_published_without_a_confirm(book, exchange):
    name, channel, _ = exchange
    Event.objects.update(published_at=None)
    target = broker.Publisher(AMQP_URL, name)
    try:
        target.open()
        channel.exchange_delete(name)  # the broker now refuses (404) what is sent there
        with pytest.raises(pika.exceptions.AMQPError):
            broker.publish_pending(target)
    finally:
        target.close()
    assert not Event.objects.filter(published_at__isnull=False).exists()
    unreachable = broker.Publisher("amqp://guest:guest@127.0.0.1:1/%2F", name)
    with pytest.raises(pika.exceptions.AMQPError):
        broker.publish_pending(unreachable)
    assert not Event.objects.filter(published_at__isnull=False).exists()


def test_the_worker_publishes_when_a_broker_is_configured(book, exchange, settings):
    name, channel, queue = exchange
    settings.AMQP_URL, settings.AMQP_EXCHANGE = AMQP_URL, name
    Event.objects.update(published_at=None)
    call_command("deliver_webhooks", "--once", stdout=io.StringIO())
    assert len(_received(channel, queue)) == Event.objects.count()
    assert not Event.objects.filter(published_at__isnull=True).exists()


def test_the_worker_waits_out_a_broker_outage_and_publishes_when_it_is_back(
    book, exchange, settings, unused_port
):
    name, channel, queue = exchange
    settings.AMQP_URL = f"amqp://guest:guest@127.0.0.1:{unused_port}/%2F"
    settings.AMQP_EXCHANGE = name
    settings.AMQP_RETRY_BASE, settings.AMQP_RETRY_MAX = 0.2, 0.4
    Event.objects.update(published_at=None)
    said: list[str] = []
    worker = Worker(say=said.append)
    try:
        worker.turn()
        assert worker.broker.state == "down" and worker.counts["published"] == 0
        assert said[-1].startswith("RabbitMQ is unreachable (")
        lease = Lease.objects.get(name=broker.LEASE)  # let go: a worker that can reach it may
        assert lease.expires_at <= timezone.now()
        assert "webhooks go on; next try in 0.2 s" in said[-1]
        worker.turn()  # within the backoff: not tried again
        assert worker.broker.failures == 1
        time.sleep(0.25)
        worker.turn()
        assert worker.broker.failures == 2 and "next try in 0.4 s" in said[-1]
        with Forwarder(unused_port, ("127.0.0.1", 5672)):
            deadline = time.monotonic() + 10
            while worker.broker.state != "up" and time.monotonic() < deadline:
                worker.turn()
                time.sleep(0.05)
            assert worker.broker.state == "up", worker.broker.health()
            assert said[-1] == "RabbitMQ is reachable again, after 2 failed tries."
            assert worker.counts["published"] == Event.objects.count()
            worker.close()
    finally:
        worker.pool.shutdown()
    assert not Event.objects.filter(published_at__isnull=True).exists()
    assert len(_received(channel, queue)) == Event.objects.count()
