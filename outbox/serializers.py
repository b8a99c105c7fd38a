"""Request and response shapes of events and webhook subscriptions."""

from __future__ import annotations

import base64
import binascii

from rest_framework import serializers

from ledgerproject.api.fields import MetadataField, TimestampField, declared
from ledgerproject.api.serializers import InputSerializer
from ledgerproject.errors import ErrorCode, LedgerError
from outbox.events import CATALOGUE
from outbox.models import Event, WebhookSubscription
from outbox.webhooks import MAX_URL, URL_PATTERN


def encode_cursor(event: Event) -> str:
    return base64.urlsafe_b64encode(f"{event.xid}.{event.seq}".encode()).decode().rstrip("=")


def decode_cursor(raw: str) -> tuple[int, int]:
    """``(xid, seq)`` of an event cursor; anything else is 400 0082."""
    try:
        text = base64.urlsafe_b64decode((raw + "=" * (-len(raw) % 4)).encode()).decode()
        xid, seq = (int(part) for part in text.split("."))
        if not (0 <= xid < 2**63 and 0 < seq < 2**63) or text != f"{xid}.{seq}":
            raise ValueError(text)
        return xid, seq
    except (ValueError, UnicodeDecodeError, binascii.Error):
        message = "The cursor is not valid."
        raise LedgerError(
            ErrorCode.INVALID_QUERY_PARAMETER, message, fields={"cursor": message}
        ) from None


class EventOut(serializers.Serializer):
    """The shape of an event (rendered by ``outbox.events.event_body`` plus its cursor)."""

    id = serializers.UUIDField()
    type = serializers.ChoiceField(choices=list(CATALOGUE))
    organizationId = serializers.UUIDField()
    ledgerId = serializers.UUIDField(allow_null=True)
    resourceId = serializers.UUIDField()
    createdAt = serializers.CharField()
    actor = serializers.JSONField(
        help_text="Who made the change: {kind (token, staff, command, system), name, id}."
    )
    requestId = serializers.CharField(allow_null=True, help_text="The request's X-Request-Id.")
    clientAddress = serializers.CharField(
        allow_null=True, help_text="The address the request came from (API and admin)."
    )
    reason = serializers.CharField(
        allow_null=True,
        help_text="The reason staff gave in the back office for a commit, cancel or revert.",
    )
    cursor = serializers.CharField(help_text="Pass it as ?cursor= to read the events after it.")
    # The envelope names it ``data``, which shadows ``Serializer.data`` for a type checker only.
    data = serializers.JSONField(  # type: ignore[assignment]
        help_text="The resource as the API renders it (a transaction with its operations)."
    )


EVENT_TYPES = ["*", *CATALOGUE]


class WebhookOut(serializers.Serializer):
    id = serializers.UUIDField()
    organizationId = serializers.UUIDField(source="organization_id")
    ledgerId = serializers.UUIDField(source="ledger_id", allow_null=True)
    url = serializers.CharField()
    eventTypes = serializers.ListField(child=serializers.CharField(), source="event_types")
    status = serializers.CharField()
    description = serializers.CharField()
    metadata = MetadataField()
    createdAt = TimestampField(source="created_at")
    updatedAt = TimestampField(source="updated_at")
    deletedAt = TimestampField(source="deleted_at", allow_null=True)
    consecutiveFailures = serializers.IntegerField(
        source="consecutive_failures",
        help_text="Failed delivery attempts in a row; a 2xx answer resets it.",
    )
    lastError = serializers.CharField(
        source="last_error",
        allow_null=True,
        help_text="Why the last failed attempt failed (the receiver's status and answer, a "
        "timeout, a refused address); null until one fails.",
    )
    lastErrorAt = TimestampField(source="last_error_at", allow_null=True)
    suspendedUntil = TimestampField(
        source="suspended_until",
        allow_null=True,
        help_text="After several failures in a row no delivery is attempted before this time; "
        "changing the URL or setting the status ACTIVE lifts it.",
    )

    def to_representation(self, instance: WebhookSubscription) -> dict[str, object]:
        data = super().to_representation(instance)
        data["lastError"] = data["lastError"] or None
        return data


class WebhookCreatedOut(WebhookOut):
    secret = serializers.CharField(
        help_text="Shown in this answer only: keep it to verify the signatures."
    )


class WebhookEditableIn(InputSerializer):
    unmodifiable = frozenset(
        {
            "id",
            "organizationId",
            "ledgerId",
            "secret",
            "createdAt",
            "updatedAt",
            "deletedAt",
            "consecutiveFailures",
            "lastError",
            "lastErrorAt",
            "suspendedUntil",
        }
    )
    url = declared(
        serializers.CharField, {"type": "string", "maxLength": MAX_URL, "pattern": URL_PATTERN}
    )(max_length=MAX_URL)
    eventTypes = serializers.ListField(
        child=serializers.ChoiceField(choices=EVENT_TYPES),
        source="event_types",
        min_length=1,
        max_length=len(EVENT_TYPES),
    )
    status = serializers.ChoiceField(choices=WebhookSubscription.STATUSES, required=False)
    description = serializers.CharField(max_length=256, required=False, allow_blank=True)
    metadata = MetadataField(required=False)


class WebhookCreateIn(WebhookEditableIn):
    pass


class WebhookUpdateIn(WebhookEditableIn):
    url = declared(
        serializers.CharField, {"type": "string", "maxLength": MAX_URL, "pattern": URL_PATTERN}
    )(max_length=MAX_URL, required=False)
    eventTypes = serializers.ListField(
        child=serializers.ChoiceField(choices=EVENT_TYPES),
        source="event_types",
        min_length=1,
        max_length=len(EVENT_TYPES),
        required=False,
    )
