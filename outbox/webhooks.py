"""Webhook subscriptions: their writes, the URL rule, and the signature of a delivery.

A subscription names a URL (http or https, a host, no credentials in it), the event types it
wants (``*`` for all) and, through the path it was created under, an organization or one of its
ledgers. Its secret is generated here, returned once by the create and never rendered again.
Each delivery carries ``Ledger-Signature: t=<unix time>,v1=<hex HMAC-SHA256 of
"<t>.<body>" keyed with the secret>`` (docs/EVENTS.md has the verification snippet)."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
import socket
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from ledgerproject.db import apply_changes
from ledgerproject.errors import ErrorCode, LedgerError
from ledgerproject.metadata import validate_metadata
from outbox.models import Delivery, WebhookSubscription

MAX_URL = 2048
SIGNATURE_HEADER = "Ledger-Signature"


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
    if parts.username or parts.password:
        raise _bad_url("The URL may not carry a user name or password.")
    if any(ch.isspace() or ord(ch) < 0x20 or ch == "\x7f" for ch in url):
        raise _bad_url("The URL may not contain white space or control characters.")
    return url


def refused_address(url: str) -> str | None:
    """At delivery time: why the URL's host may not be called (it resolves to a loopback,
    private, link-local or otherwise reserved address), unless
    ``WEBHOOK_ALLOW_PRIVATE_NETWORKS`` is set (development and tests)."""
    if settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS:
        return None
    parts = urlsplit(url)
    try:
        infos = socket.getaddrinfo(parts.hostname, parts.port or 443, proto=socket.IPPROTO_TCP)
    except OSError as error:
        return f"the host does not resolve: {error}"
    for info in infos:
        address = ipaddress.ip_address(info[4][0])
        if not address.is_global or address.is_multicast:
            return f"the host resolves to a non-public address ({address})"
    return None


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
    """The new subscription; its ``secret`` is readable on this instance only once rendered."""
    now = timezone.now()
    return WebhookSubscription.objects.create(
        organization_id=organization_id,
        ledger_id=ledger_id,
        url=check_url(url),
        event_types=sorted(set(event_types)),
        description=description,
        status=status,
        secret=new_secret(),
        metadata=validate_metadata(metadata or {}),
        created_at=now,
        updated_at=now,
    )


def subscription_update(
    *, subscription: WebhookSubscription, data: dict[str, Any]
) -> WebhookSubscription:
    if "url" in data:
        check_url(data["url"])
    if "event_types" in data:
        data = {**data, "event_types": sorted(set(data["event_types"]))}
    apply_changes(subscription, data)
    subscription.updated_at = timezone.now()
    subscription.save()
    return subscription


def subscription_delete(*, subscription: WebhookSubscription) -> WebhookSubscription:
    """Soft delete: the deliveries and their attempts stay readable; none is attempted again."""
    subscription.deleted_at = subscription.updated_at = timezone.now()
    subscription.save(update_fields=["deleted_at", "updated_at"])
    return subscription


def delivery_retry(*, delivery_ids: list[Any]) -> int:
    """Staff's retry: the deliveries are due now, with a fresh allowance of attempts."""
    with transaction.atomic():
        return Delivery.objects.filter(pk__in=delivery_ids).update(
            status=Delivery.PENDING,
            attempts=0,
            next_attempt_at=timezone.now(),
            updated_at=timezone.now(),
        )
