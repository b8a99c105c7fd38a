"""The delivery worker's steps (``manage.py deliver_webhooks`` loops over them).

- ``fan_out``: events not yet dispatched become one ``Delivery`` per matching subscription
  (``SELECT ... FOR UPDATE SKIP LOCKED``, so several workers share the work).
- ``deliver_next``: one due delivery is taken with ``FOR UPDATE SKIP LOCKED`` and its row stays
  locked while its request runs, so two workers never send one attempt at the same time; the
  attempt and the new state commit together. A worker killed mid-request leaves the row as it
  was (PENDING, due): another worker, or the same one restarted, sends it again. Delivery is at
  least once; receivers deduplicate on ``Ledger-Event-Id``.
- Failures (no 2xx, a timeout, a refused address) are retried with exponential backoff and
  jitter up to ``WEBHOOK_MAX_ATTEMPTS``, then the delivery is FAILED (staff can retry it)."""

from __future__ import annotations

import datetime as dt
import json
import random
import time

import requests
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from outbox.events import event_body
from outbox.models import Delivery, DeliveryAttempt, Event, WebhookSubscription
from outbox.webhooks import SIGNATURE_HEADER, refused_address, sign

ANSWER_KEPT = 2000


def fan_out(*, batch: int = 200) -> int:
    """Dispatch up to ``batch`` events; answers how many."""
    with transaction.atomic():
        events = list(
            Event.objects.filter(dispatched_at__isnull=True)
            .order_by("seq")
            .select_for_update(skip_locked=True)[:batch]
        )
        if not events:
            return 0
        subscriptions = list(
            WebhookSubscription.objects.filter(
                organization_id__in={e.organization_id for e in events}, deleted_at__isnull=True
            )
        )
        now = timezone.now()
        Delivery.objects.bulk_create(
            [
                Delivery(
                    subscription=s, event=e, next_attempt_at=now, created_at=now, updated_at=now
                )
                for e in events
                for s in subscriptions
                if s.organization_id == e.organization_id
                and s.created_at <= e.created_at
                and s.matches(e)
            ],
            ignore_conflicts=True,
        )
        Event.objects.filter(seq__in=[e.seq for e in events]).update(dispatched_at=now)
        return len(events)


def backoff(attempts: int) -> dt.timedelta:
    """Exponential with jitter: between half and all of base * 2^(attempts-1), capped (the
    jitter spreads retries of many deliveries that failed together)."""
    ceiling = min(settings.WEBHOOK_BACKOFF_MAX, settings.WEBHOOK_BACKOFF_BASE * 2 ** (attempts - 1))
    return dt.timedelta(seconds=random.uniform(ceiling / 2, ceiling))


def deliver_next() -> bool:
    """Send one due delivery of an active subscription; answers whether there was one."""
    with transaction.atomic():
        delivery = (
            Delivery.objects.select_related("subscription", "event")
            .filter(
                status=Delivery.PENDING,
                next_attempt_at__lte=timezone.now(),
                subscription__status=WebhookSubscription.ACTIVE,
                subscription__deleted_at__isnull=True,
            )
            .order_by("next_attempt_at", "id")
            .select_for_update(skip_locked=True, of=("self",))
            .first()
        )
        if delivery is None:
            return False
        _attempt(delivery)
        return True


def _attempt(delivery: Delivery) -> None:
    subscription, event = delivery.subscription, delivery.event
    body = json.dumps(event_body(event), separators=(",", ":")).encode()
    started = timezone.now()
    clock = time.monotonic()
    attempt = DeliveryAttempt(delivery=delivery, number=delivery.attempts + 1, started_at=started)
    refusal = refused_address(subscription.url)
    if refusal is not None:
        attempt.error = f"Not sent: {refusal}."
    else:
        timestamp = int(time.time())
        headers = {
            "Content-Type": "application/json",
            "User-Agent": "ledger-webhooks/1",
            "Ledger-Event-Id": str(event.event_id),
            "Ledger-Event-Type": event.type,
            "Ledger-Delivery-Id": str(delivery.pk),
            SIGNATURE_HEADER: sign(subscription.secret, timestamp, body),
        }
        try:
            answer = requests.post(
                subscription.url,
                data=body,
                headers=headers,
                timeout=settings.WEBHOOK_TIMEOUT,
                allow_redirects=False,
            )
            attempt.status_code = answer.status_code
            attempt.response_body = answer.text[:ANSWER_KEPT]
        except requests.RequestException as error:
            attempt.error = f"{type(error).__name__}: {error}"[:ANSWER_KEPT]
    attempt.duration_ms = int((time.monotonic() - clock) * 1000)
    attempt.save(force_insert=True)
    delivery.attempts += 1
    delivery.updated_at = timezone.now()
    if attempt.status_code is not None and 200 <= attempt.status_code < 300:
        delivery.status = Delivery.SUCCEEDED
    elif delivery.attempts >= settings.WEBHOOK_MAX_ATTEMPTS:
        delivery.status = Delivery.FAILED
    else:
        delivery.next_attempt_at = delivery.updated_at + backoff(delivery.attempts)
    delivery.save(update_fields=["attempts", "status", "next_attempt_at", "updated_at"])
