"""Webhook subscriptions: their writes, the URL rule, and the signature of a delivery.

A subscription names a URL (http or https, a host, no credentials in it), the event types it
wants (``*`` for all) and, through the path it was created under, an organization or one of its
ledgers. Its secret is generated here, returned once by the create and never rendered again.
Each delivery carries ``Ledger-Signature: t=<unix time>,v1=<hex HMAC-SHA256 of
"<t>.<body>" keyed with the secret>`` (docs/EVENTS.md has the verification snippet)."""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from ledgerproject import actors
from ledgerproject.db import apply_changes, new_id
from ledgerproject.errors import ErrorCode, LedgerError
from ledgerproject.metadata import validate_metadata
from outbox import leases, network
from outbox.events import event_body
from outbox.models import Delivery, Event, WebhookSubscription

MAX_URL = 2048
SIGNATURE_HEADER = "Ledger-Signature"
REGISTRATION_RESOLVE_TIMEOUT = 2.0


def _bad_url(message: str) -> LedgerError:
    return LedgerError(ErrorCode.INVALID_WEBHOOK_URL, message, fields={"url": message})


# ``check_url`` as a pattern, for the schema (it also refuses URLs with no host, a user or
# password, or a malformed port, which a pattern does not say).
URL_PATTERN = "^[Hh][Tt][Tt][Pp][Ss]?://[^\\s\\u0000-\\u001f\\u007f]+$"


def check_url(url: str) -> str:
    """The rule for a subscription's URL: http(s), a host, no user or password, bounded."""
    if len(url) > MAX_URL:
        raise _bad_url(f"The URL may be at most {MAX_URL} characters.")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        raise _bad_url("The URL is not valid.") from None
    if not url[:8].lower().startswith(("http://", "https://")):
        raise _bad_url("Only http and https URLs can receive webhooks.")
    if not parts.hostname:
        raise _bad_url("The URL has no host.")
    try:
        parts.hostname.encode("idna")
    except UnicodeError:
        raise _bad_url("The URL's host is not a valid host name.") from None
    if parts.username or parts.password:
        raise _bad_url("The URL may not carry a user name or password.")
    if any(ch.isspace() or ord(ch) < 0x20 or ch == "\x7f" for ch in url):
        raise _bad_url("The URL may not contain white space or control characters.")
    return url


def check_destination(url: str) -> str:
    """At registration and on a change of URL: refuse a host that resolves to a loopback,
    private, link-local or otherwise non-public address (``outbox.network.refusal``), unless
    ``WEBHOOK_ALLOW_PRIVATE_NETWORKS`` is set. A host that does not resolve (yet), or whose
    resolver does not answer within ``REGISTRATION_RESOLVE_TIMEOUT``, is accepted: DNS may be
    set up after the subscription, and every delivery checks the address it connects to."""
    if settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS:
        return url
    deadline = time.monotonic() + REGISTRATION_RESOLVE_TIMEOUT
    try:
        network.destinations(url, deadline=deadline, allow_private=False)
    except (network.Unresolved, TimeoutError):
        pass  # checked at every delivery
    except network.Refused as refused:
        raise _bad_url(f"The URL cannot receive webhooks: {refused}.") from None
    return url


def new_secret() -> str:
    return "whsec_" + secrets.token_urlsafe(32)


def sign(secret: str, timestamp: int, body: bytes) -> str:
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"t={timestamp},v1={digest.hexdigest()}"


def subscription_create(
    *,
    organization_id: Any,
    ledger_id: Any = None,
    url: str,
    event_types: list[str],
    description: str = "",
    status: str = WebhookSubscription.ACTIVE,
    metadata: dict[str, Any] | None = None,
) -> WebhookSubscription:
    """The new subscription; its ``secret`` is readable on this instance only once rendered.
    An organization has at most ``WEBHOOK_MAX_SUBSCRIPTIONS`` (its ledgers' included)."""
    check_destination(check_url(url))  # resolves the host: before any transaction
    metadata = validate_metadata(metadata or {})
    with transaction.atomic():
        leases.lock(f"webhooks/{organization_id}")
        check_room(organization_id)
        now = timezone.now()
        return WebhookSubscription.objects.create(
            organization_id=organization_id,
            ledger_id=ledger_id,
            url=url,
            event_types=sorted(set(event_types)),
            description=description,
            status=status,
            secret=new_secret(),
            metadata=metadata,
            created_at=now,
            updated_at=now,
        )


def check_room(organization_id: Any) -> None:
    """Refuse (0121) when the organization has ``WEBHOOK_MAX_SUBSCRIPTIONS`` already. Exact only
    under ``subscription_create``'s lock; a form may ask it first, for the message."""
    active = WebhookSubscription.objects.filter(
        organization_id=organization_id, deleted_at__isnull=True
    ).count()
    limit = settings.WEBHOOK_MAX_SUBSCRIPTIONS
    if active >= limit:
        raise LedgerError(
            ErrorCode.WEBHOOK_LIMIT_REACHED,
            f"An organization may have at most {limit} webhook subscriptions; delete one first.",
        )


def subscription_update(
    *, subscription: WebhookSubscription, data: dict[str, Any]
) -> WebhookSubscription:
    """A change of URL, or setting the subscription ACTIVE, also lifts a suspension: whoever
    changed it has presumably mended the receiver."""
    if "url" in data:
        check_destination(check_url(data["url"]))
    if "event_types" in data:
        data = {**data, "event_types": sorted(set(data["event_types"]))}
    apply_changes(subscription, data)
    if "url" in data or data.get("status") == WebhookSubscription.ACTIVE:
        subscription.consecutive_failures = 0
        subscription.suspended_until = None
    subscription.updated_at = timezone.now()
    subscription.save()
    return subscription


def subscription_delete(*, subscription: WebhookSubscription) -> WebhookSubscription:
    """Soft delete: the deliveries and their attempts stay readable; none is attempted again."""
    subscription.deleted_at = subscription.updated_at = timezone.now()
    subscription.save(update_fields=["deleted_at", "updated_at"])
    return subscription


def delivery_retry(*, delivery_ids: list[Any]) -> int:
    """Staff's retry: the deliveries are due now, with a fresh allowance of attempts (those in
    flight are left to finish)."""
    with transaction.atomic():
        return Delivery.objects.filter(pk__in=delivery_ids, leased_until__isnull=True).update(
            status=Delivery.PENDING,
            attempts=0,
            next_attempt_at=timezone.now(),
            updated_at=timezone.now(),
        )


TEST_EVENT = "webhook.test"


def send_test(subscription: WebhookSubscription) -> network.Answer:
    """POST a signed ``webhook.test`` event to the subscription's URL now, shaped as every
    event is (``events.event_body``), with the headers, signature, time limit and address rules
    of a delivery, and answer what came back. Nothing is stored: the subscription's health and
    its deliveries stay as they were. It waits on the network, so it refuses to run inside a
    database transaction."""
    if transaction.get_connection().in_atomic_block:
        raise RuntimeError("a test send waits on the network: not inside a transaction")
    work = actors.current()
    event = Event(
        event_id=new_id(),
        type=TEST_EVENT,
        organization_id=subscription.organization_id,
        ledger_id=subscription.ledger_id,
        resource_id=subscription.pk,
        created_at=timezone.now(),
        data={"subscriptionId": str(subscription.pk)},
        client_address=work.client_address,
        **actors.stamp(),
    )
    body = json.dumps(event_body(event), separators=(",", ":")).encode()
    headers = [
        ("Content-Type", "application/json"),
        ("Ledger-Event-Id", str(event.event_id)),
        ("Ledger-Event-Type", TEST_EVENT),
        ("Ledger-Delivery-Id", str(new_id())),
        (SIGNATURE_HEADER, sign(subscription.secret, int(time.time()), body)),
    ]
    return network.post(
        subscription.url,
        body,
        headers,
        timeout=settings.WEBHOOK_TIMEOUT,
        allow_private=settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
    )
