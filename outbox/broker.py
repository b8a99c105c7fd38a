"""Publishing events to RabbitMQ (when ``LEDGER_AMQP_URL`` is set), with pika.

A durable topic exchange (``LEDGER_AMQP_EXCHANGE``, ``ledger.events`` by default); each event
is a persistent message (delivery mode 2) routed by its type, with the event id as message id.
The channel is in confirm mode: ``basic_publish`` returns once the broker has confirmed the
message (it raises on a nack).

One worker process publishes at a time (it holds the lease ``rabbitmq``), so the events go out
once and in ``(xid, seq)`` order however many workers run. No database transaction is open
while the broker is waited on: the batch is read, published, and the events the broker
confirmed are then marked published, also when a later one failed. A crash between a confirm
and that mark publishes the event again: at least once, consumers deduplicate on the id."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pika
from django.conf import settings
from django.utils import timezone

from outbox import leases
from outbox.events import event_body
from outbox.models import Event

LEASE = "rabbitmq"
# Longer than a batch can take: pika gives up on a connection, a blocked broker or a lost one
# well before this (``_parameters``).
LEASE_SECONDS = 120
# Unless the URL says otherwise: how long pika waits to connect, and for a broker that has
# blocked its publishers (out of memory or disk) before it gives up.
CONNECT_TIMEOUT = 5
BLOCKED_TIMEOUT = 30

# What a broker that is down, unreachable or refusing raises (pika wraps most socket errors).
OUTAGES: tuple[type[BaseException], ...] = (pika.exceptions.AMQPError, OSError)


def _parameters(url: str) -> Any:
    parameters = pika.URLParameters(url)
    query = url.partition("?")[2]
    if "socket_timeout" not in query:
        parameters.socket_timeout = CONNECT_TIMEOUT
    if "blocked_connection_timeout" not in query:
        parameters.blocked_connection_timeout = BLOCKED_TIMEOUT
    return parameters


class Publisher:
    def __init__(self, url: str, exchange: str) -> None:
        self.url, self.exchange = url, exchange
        self.connection: Any = None
        self.channel: Any = None

    def open(self) -> Any:
        if self.channel is None or not self.channel.is_open:
            self.close()
            self.connection = pika.BlockingConnection(_parameters(self.url))
            self.channel = self.connection.channel()
            self.channel.exchange_declare(self.exchange, exchange_type="topic", durable=True)
            self.channel.confirm_delivery()
        return self.channel

    def publish(self, event: Event) -> None:
        """Returns once the broker confirmed the message; raises otherwise."""
        self.open().basic_publish(
            exchange=self.exchange,
            routing_key=event.type,
            body=json.dumps(event_body(event), separators=(",", ":")).encode(),
            properties=pika.BasicProperties(
                content_type="application/json",
                delivery_mode=pika.DeliveryMode.Persistent,
                message_id=str(event.event_id),
                type=event.type,
                timestamp=int(event.created_at.timestamp()),
            ),
        )

    def close(self) -> None:
        """Let the connection go; a connection the broker already dropped is simply forgotten."""
        connection, self.connection, self.channel = self.connection, None, None
        if connection is not None and connection.is_open:
            with contextlib.suppress(*OUTAGES):
                connection.close()


def publisher() -> Publisher | None:
    return Publisher(settings.AMQP_URL, settings.AMQP_EXCHANGE) if settings.AMQP_URL else None


def publish_pending(target: Publisher, *, batch: int = 200) -> int | None:
    """Publish up to ``batch`` unpublished events in order; answers how many, or None while
    another worker holds the lease. Raises what the broker raised, after marking the events it
    had confirmed."""
    if not leases.take(LEASE, seconds=LEASE_SECONDS):
        return None
    events = list(Event.objects.filter(published_at__isnull=True).order_by("xid", "seq")[:batch])
    confirmed: list[int] = []
    try:
        for event in events:
            target.publish(event)
            confirmed.append(event.seq)
    finally:
        if confirmed:
            Event.objects.filter(seq__in=confirmed).update(published_at=timezone.now())
    return len(confirmed)


def stop_publishing() -> None:
    """A clean stop: another worker may take over publishing at once."""
    leases.release(LEASE)
