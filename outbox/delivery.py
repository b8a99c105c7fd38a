"""The webhook worker's database steps; ``outbox.worker`` runs them and the network between.

Each step is one short database transaction, and none waits on the network: a delivery is
*claimed* (a lease written on its row), the request is sent with no transaction open
(``outbox.network``), and its outcome is *recorded* in a transaction of its own.

- ``fan_out``: events not yet dispatched become one ``Delivery`` per matching subscription.
- ``claim``: the oldest due delivery of an active, unsuspended subscription whose organization
  has fewer than ``WEBHOOK_CONCURRENCY_PER_ORGANIZATION`` attempts in flight. Its attempt is
  counted and it is leased for the attempt's deadline plus ``LEASE_GRACE``: no other worker
  takes it meanwhile.
- ``record``: the attempt and the delivery's new state; a 2xx is SUCCEEDED, anything else is
  retried with exponential backoff and jitter up to ``WEBHOOK_MAX_ATTEMPTS``, then FAILED
  (staff can retry it). The subscription keeps its last error and its failures in a row; after
  ``WEBHOOK_SUSPEND_AFTER`` of them it is suspended for a backoff, so its deliveries wait
  without taking the worker's time from anyone else's.
- ``recover``: a lease that lapsed belongs to an attempt whose worker died (killed, or out of
  memory) before recording it: it is recorded as a failed attempt, like any other.

Delivery is at least once: a worker that dies after the receiver answered and before
``record`` leaves an attempt that ``recover`` counts as failed, and it is sent again. Receivers
deduplicate on ``Ledger-Event-Id``."""

from __future__ import annotations

import datetime as dt
import json
import random
import time
import uuid
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from outbox.events import event_body
from outbox.models import Delivery, DeliveryAttempt, Event, WebhookSubscription
from outbox.network import Answer
from outbox.webhooks import SIGNATURE_HEADER, sign

# How long past its deadline an attempt's lease holds: room for the worker to record it.
LEASE_GRACE = 30

SENT, FAILED, REFUSED = "sent", "failed", "refused"


@dataclass(frozen=True)
class Claim:
    """One attempt to make: everything the request needs, and the lease that records it."""

    delivery_id: uuid.UUID
    lease: uuid.UUID
    url: str
    body: bytes
    headers: list[tuple[str, str]]


@dataclass(frozen=True)
class Outcome:
    """What ``record`` made of an answer: ``kind`` is SENT, FAILED or REFUSED; ``retried``
    when the delivery will be attempted again."""

    kind: str
    retried: bool


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


def _lease() -> dt.timedelta:
    """How long a claim holds its delivery: the attempt's deadline, then ``LEASE_GRACE``."""
    return dt.timedelta(seconds=settings.WEBHOOK_TIMEOUT + LEASE_GRACE)


def _organizations_at_capacity(now: dt.datetime) -> list[uuid.UUID]:
    in_flight = (
        Delivery.objects.filter(leased_until__gt=now)
        .values("subscription__organization_id")
        .annotate(count=Count("id"))
        .filter(count__gte=settings.WEBHOOK_CONCURRENCY_PER_ORGANIZATION)
    )
    return [row["subscription__organization_id"] for row in in_flight]


def claim() -> Claim | None:
    """Lease the next attempt to make, or None when nothing is due that may be sent now."""
    with transaction.atomic():
        now = timezone.now()
        delivery = (
            Delivery.objects.select_related("subscription", "event")
            .filter(
                status=Delivery.PENDING,
                next_attempt_at__lte=now,
                leased_until__isnull=True,
                subscription__status=WebhookSubscription.ACTIVE,
                subscription__deleted_at__isnull=True,
            )
            .filter(
                Q(subscription__suspended_until__isnull=True)
                | Q(subscription__suspended_until__lte=now)
            )
            .exclude(subscription__organization_id__in=_organizations_at_capacity(now))
            .order_by("next_attempt_at", "id")
            .select_for_update(skip_locked=True, of=("self",))
            .first()
        )
        if delivery is None:
            return None
        delivery.attempts += 1
        delivery.lease = uuid.uuid4()
        delivery.leased_until = now + _lease()
        delivery.updated_at = now
        delivery.save(update_fields=["attempts", "lease", "leased_until", "updated_at"])
    subscription, event = delivery.subscription, delivery.event
    body = json.dumps(event_body(event), separators=(",", ":")).encode()
    headers = [
        ("Content-Type", "application/json"),
        ("Ledger-Event-Id", str(event.event_id)),
        ("Ledger-Event-Type", event.type),
        ("Ledger-Delivery-Id", str(delivery.pk)),
        (SIGNATURE_HEADER, sign(subscription.secret, int(time.time()), body)),
    ]
    return Claim(
        delivery_id=delivery.pk,
        lease=delivery.lease,
        url=subscription.url,
        body=body,
        headers=headers,
    )


def record(claim: Claim, answer: Answer) -> Outcome | None:
    """Record the attempt and the delivery's new state; None when the lease had lapsed and
    ``recover`` already recorded this attempt as failed."""
    with transaction.atomic():
        delivery = (
            Delivery.objects.select_for_update()
            .filter(pk=claim.delivery_id, lease=claim.lease)
            .first()
        )
        if delivery is None:
            return None
        started = timezone.now() - dt.timedelta(milliseconds=answer.duration_ms)
        return _close_attempt(delivery, answer, started)


def recover(*, batch: int = 100) -> int:
    """Record the attempts whose lease lapsed as failed; answers how many."""
    with transaction.atomic():
        now = timezone.now()
        lapsed = list(
            Delivery.objects.filter(status=Delivery.PENDING, leased_until__lt=now)
            .order_by("leased_until", "id")
            .select_for_update(skip_locked=True)[:batch]
        )
        lasted = Answer(
            error="No outcome was recorded: the worker stopped during the attempt (its lease "
            "lapsed).",
            duration_ms=int(_lease().total_seconds() * 1000),
        )
        for delivery in lapsed:
            assert delivery.leased_until is not None
            _close_attempt(delivery, lasted, delivery.leased_until - _lease())
        return len(lapsed)


def _close_attempt(delivery: Delivery, answer: Answer, started: dt.datetime) -> Outcome:
    """Inside ``record``'s or ``recover``'s transaction, with the delivery's row locked."""
    now = timezone.now()
    DeliveryAttempt(
        delivery=delivery,
        number=delivery.attempts,
        started_at=started,
        duration_ms=answer.duration_ms,
        status_code=answer.status_code,
        response_body=answer.body,
        error=answer.error,
    ).save(force_insert=True)
    delivery.lease = delivery.leased_until = None
    delivery.updated_at = now
    retried = False
    if answer.ok:
        delivery.status = Delivery.SUCCEEDED
    elif delivery.attempts >= settings.WEBHOOK_MAX_ATTEMPTS:
        delivery.status = Delivery.FAILED
    else:
        delivery.next_attempt_at = now + backoff(delivery.attempts)
        retried = True
    delivery.save(
        update_fields=["status", "next_attempt_at", "lease", "leased_until", "updated_at"]
    )
    _note(delivery.subscription_id, answer, now)
    if answer.ok:
        return Outcome(SENT, retried=False)
    return Outcome(REFUSED if answer.refused else FAILED, retried=retried)


def _note(subscription_id: Any, answer: Answer, now: dt.datetime) -> None:
    """The subscription's health after an attempt: reset by a 2xx; otherwise its last error,
    one more failure in a row and, from ``WEBHOOK_SUSPEND_AFTER`` on, a suspension that grows
    with each further failure as a delivery's backoff does."""
    subscriptions = WebhookSubscription.objects.filter(pk=subscription_id)
    if answer.ok:
        subscriptions.filter(consecutive_failures__gt=0).update(
            consecutive_failures=0, suspended_until=None
        )
        return
    subscription = subscriptions.select_for_update().get()  # after the delivery's row
    subscription.consecutive_failures += 1
    subscription.last_error = (
        answer.error or f"The receiver answered {answer.status_code}: {answer.body[:200]}"
    )
    subscription.last_error_at = now
    beyond = subscription.consecutive_failures - settings.WEBHOOK_SUSPEND_AFTER + 1
    if beyond >= 1:
        subscription.suspended_until = now + backoff(beyond)
    subscription.save(
        update_fields=["consecutive_failures", "last_error", "last_error_at", "suspended_until"]
    )
