"""Writing events: ``record`` inside the change's database transaction. The catalogue of types
is in docs/EVENTS.md: ``<noun>.created|updated|deleted`` for resources,
``transaction.posted|committed|reverted|canceled|commit_failed`` for postings,
``scheduled_posting.created|posted|failed|canceled`` for postings made later, and
``block.sealed`` for the journal (``journal``). Whoever listens (``listen``: the journal's
sealer) hears of each ledger whose events a database transaction wrote, once it commits."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable
from operator import itemgetter
from typing import Any, TypeVar

from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.utils import timezone

from ledgerproject import actors, jsonbytes
from ledgerproject.db import new_id
from ledgerproject.formats import render_timestamp
from outbox import renderers
from outbox.models import Event

T = TypeVar("T")
# What the API's values that JSON has no type for become (timestamps, decimals, lazy texts).
_DJANGO_DEFAULT = DjangoJSONEncoder().default

CREATED, UPDATED, DELETED = "created", "updated", "deleted"
TRANSACTION_POSTED = "transaction.posted"
TRANSACTION_COMMITTED = "transaction.committed"
TRANSACTION_REVERTED = "transaction.reverted"
TRANSACTION_CANCELED = "transaction.canceled"
# A hold's own commit (``commitAt``) was refused: it stays pending; the data says why.
TRANSACTION_COMMIT_FAILED = "transaction.commit_failed"

RESOURCE_NOUNS = (
    "organization", "ledger", "instrument", "rate", "product", "portfolio", "account", "template",
    "balance_monitor",
)  # fmt: skip
# A change of a balance made a monitor's condition true (``organizations.monitors``).
MONITOR_TRIGGERED = "balance_monitor.triggered"
TRANSACTION_TYPES = (
    TRANSACTION_POSTED,
    TRANSACTION_COMMITTED,
    TRANSACTION_REVERTED,
    TRANSACTION_CANCELED,
    TRANSACTION_COMMIT_FAILED,
)
# A posting kept for later (``transactions.scheduling``): accepted, then posted, failed or
# canceled.
SCHEDULED_TYPES = tuple(
    f"scheduled_posting.{action}" for action in ("created", "posted", "failed", "canceled")
)
# A block of a ledger's journal was sealed. Not itself an entry of the journal: the block it
# announces is chained already.
BLOCK_SEALED = "block.sealed"
# A change staff proposed in the back office and another decides (``transactions.approvals``).
APPROVAL_STEPS = tuple(
    f"approval.{what}" for what in ("proposed", "approved", "rejected", "failed")
)
# And who changed a ledger's rules of what needs a second person.
APPROVAL_TYPES = APPROVAL_STEPS + tuple(
    f"approval_rule.{action}" for action in (CREATED, UPDATED, DELETED)
)
CATALOGUE = (
    tuple(f"{noun}.{action}" for noun in RESOURCE_NOUNS for action in (CREATED, UPDATED, DELETED))
    + TRANSACTION_TYPES
    + SCHEDULED_TYPES
    + APPROVAL_TYPES
    + (MONITOR_TRIGGERED, BLOCK_SEALED)
)

Listener = Callable[[uuid.UUID, uuid.UUID], None]
_LISTENERS: list[Listener] = []


def listen(listener: Listener) -> None:
    """Call ``listener(organization_id, ledger_id)`` after each commit of a database
    transaction that wrote an event of that ledger."""
    _LISTENERS.append(listener)


def _heard(organization_id: Any, ledger_id: Any) -> None:
    for listener in _LISTENERS:
        # robust: a listener that fails must not fail a request whose change has committed.
        transaction.on_commit(functools.partial(listener, organization_id, ledger_id), robust=True)


def scope_of(instance: Any) -> tuple[Any, Any]:
    """(organization id, ledger id) of a resource: an organization is its own scope."""
    if renderers.noun_of(type(instance)) == "organization":
        return instance.pk, None
    if renderers.noun_of(type(instance)) == "ledger":
        return instance.organization_id, instance.pk
    return instance.organization_id, getattr(instance, "ledger_id", None)


def _plain(data: Any) -> Any:
    """The rendering as plain JSON values (what the API would send)."""
    return jsonbytes.plain(data, _DJANGO_DEFAULT)


def build(event_type: str, instance: Any, data: Any = None) -> Event:
    """The event, to be written in the current database transaction."""
    organization_id, ledger_id = scope_of(instance)
    if ledger_id is not None and _LISTENERS and event_type != BLOCK_SEALED:
        _heard(organization_id, ledger_id)
    return Event(
        event_id=new_id(),
        type=event_type,
        organization_id=organization_id,
        ledger_id=ledger_id,
        resource_id=instance.pk,
        created_at=timezone.now(),
        data=_plain(data) if data is not None else rendering(instance),
        client_address=actors.current().client_address,
        reason=actors.current().reason,
        **actors.stamp(),
    )


def rendering(instance: Any) -> Any:
    """The resource as its events hold it: the API's rendering, as plain JSON values."""
    data = renderers.render(instance)
    return data if renderers.renders_plain(type(instance)) else _plain(data)


def record(instance: T, action: str) -> T:
    """Write the event ``<noun>.<action>`` of ``instance``, rendered as it is now, in the
    current database transaction (call it once the change is saved); answers the instance."""
    build(f"{renderers.noun_of(type(instance))}.{action}", instance).save(force_insert=True)
    return instance


def event_body(event: Event) -> dict[str, Any]:
    """An event as the events API, the webhooks and the broker send it."""
    return {
        "id": str(event.event_id),
        "type": event.type,
        "organizationId": str(event.organization_id),
        "ledgerId": None if event.ledger_id is None else str(event.ledger_id),
        "resourceId": str(event.resource_id),
        "createdAt": render_timestamp(event.created_at),
        "actor": actors.actor_of(event),
        "requestId": event.request_id or None,
        "clientAddress": event.client_address,
        "reason": event.reason,
        "data": event.data,
    }


EVENT_COLUMNS = (
    "event_id", "type", "organization_id", "ledger_id", "resource_id", "created_at", "data",
    "actor_kind", "actor_name", "actor_id", "request_id", "client_address", "reason",
)  # fmt: skip
_event_values = itemgetter(*EVENT_COLUMNS)


def event_rows_json(events: list[Event]) -> str:
    """The events as one JSON array for the posting's statement, each an array of its values
    in ``EVENT_COLUMNS``' order (the write function, transactions/sql/ledger_write_posting.*,
    reads them by position)."""
    return jsonbytes.dumps([_event_values(e.__dict__) for e in events], _DJANGO_DEFAULT).decode()
