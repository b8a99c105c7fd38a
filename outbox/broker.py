"""Publishing events to RabbitMQ (when ``LEDGER_AMQP_URL`` is set), with pika.

A durable topic exchange (``LEDGER_AMQP_EXCHANGE``, ``ledger.events`` by default); each event
is a persistent message (delivery mode 2) routed by its type, with the event id as message id.
The channel is in confirm mode: ``basic_publish`` returns once the broker has confirmed the
message (it raises on a nack), and only then, in the same database transaction that took the
events with ``FOR UPDATE SKIP LOCKED``, are they marked published. A crash between a confirm
and that commit publishes the event again: at least once, consumers deduplicate on the id."""

from __future__ import annotations

import json
from typing import Any

import pika
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from outbox.events import event_body
from outbox.models import Event


class Publisher:
    def __init__(self, url: str, exchange: str) -> None:
        self.url, self.exchange = url, exchange
        self.connection: Any = None
        self.channel: Any = None

    def _open(self) -> Any:
        if self.channel is None or not self.channel.is_open:
            self.close()
            self.connection = pika.BlockingConnection(pika.URLParameters(self.url))
            self.channel = self.connection.channel()
            self.channel.exchange_declare(self.exchange, exchange_type="topic", durable=True)
            self.channel.confirm_delivery()
        return self.channel

    def publish(self, event: Event) -> None:
        """Returns once the broker confirmed the message; raises otherwise."""
        self._open().basic_publish(
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
        if self.connection is not None and self.connection.is_open:
            self.connection.close()
        self.connection = self.channel = None


def publisher() -> Publisher | None:
    return Publisher(settings.AMQP_URL, settings.AMQP_EXCHANGE) if settings.AMQP_URL else None


def publish_pending(target: Publisher, *, batch: int = 200) -> int:
    """Publish up to ``batch`` unpublished events in order; answers how many."""
    with transaction.atomic():
        events = list(
            Event.objects.filter(published_at__isnull=True)
            .order_by("xid", "seq")
            .select_for_update(skip_locked=True)[:batch]
        )
        for event in events:
            target.publish(event)
        if events:
            Event.objects.filter(seq__in=[e.seq for e in events]).update(
                published_at=timezone.now()
            )
        return len(events)
