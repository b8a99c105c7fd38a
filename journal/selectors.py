"""Reading the journal: blocks, a block's entries, and the proof that an entry is in a block."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.db.models import Q, QuerySet

from journal import merkle
from journal.models import Block
from journal.services import entries
from outbox.models import Event


def blocks(organization_id: uuid.UUID, ledger_id: uuid.UUID) -> QuerySet[Block]:
    return Block.objects.filter(organization_id=organization_id, ledger_id=ledger_id).order_by(
        "height"
    )


def block_entries(block: Block) -> QuerySet[Event]:
    """The entries a block seals, in order (all of them, whatever happened to them since)."""
    first, last = block.first, block.last
    return (
        entries(block.organization_id, block.ledger_id)
        .filter(xid__gte=first[0], xid__lte=last[0])  # the index's range, spelled out
        .filter(Q(xid__gt=first[0]) | Q(xid=first[0], seq__gte=first[1]))
        .filter(Q(xid__lt=last[0]) | Q(xid=last[0], seq__lte=last[1]))
        .order_by("xid", "seq")
    )


def block_of(event: Event) -> Block | None:
    """The block that seals ``event``; None while it is not sealed (or not a ledger's)."""
    if event.ledger_id is None:
        return None
    return (
        blocks(event.organization_id, event.ledger_id)
        .filter(last_xid__gte=event.xid)  # the index's range, spelled out
        .filter(Q(last_xid__gt=event.xid) | Q(last_xid=event.xid, last_seq__gte=event.seq))
        .order_by("last_xid", "last_seq")
        .first()
    )


@dataclass(frozen=True)
class EntryProof:
    event: Event
    block: Block
    position: int
    path: list[bytes]

    @property
    def entry_hash(self) -> bytes:
        return merkle.entry_hash(merkle.entry_of(self.event, self.block.entry_form))


def proofs(
    organization_id: uuid.UUID, ledger_id: uuid.UUID, resource_id: uuid.UUID
) -> tuple[list[EntryProof], list[Event]]:
    """The journal entries about a resource: proofs of those sealed, and those not yet."""
    sealed, unsealed = [], []
    about = entries(organization_id, ledger_id).filter(resource_id=resource_id)
    for event in about.order_by("xid", "seq"):
        block = block_of(event)
        if block is None:
            unsealed.append(event)
            continue
        cursors = list(block_entries(block).values_list("xid", "seq"))
        position = cursors.index((event.xid, event.seq))
        leaves = merkle.leaves_of(bytes(block.leaves))
        sealed.append(EntryProof(event, block, position, merkle.path(leaves, position)))
    return sealed, unsealed


def stream(organization_id: uuid.UUID, ledger_id: uuid.UUID) -> Iterator[Event]:
    """Every entry of the ledger's journal, in order, read a slice at a time."""
    return entries(organization_id, ledger_id).order_by("xid", "seq").iterator(chunk_size=2000)


def describe(event: Event) -> str:
    """How a report names an entry: by the resource it is about."""
    noun = event.type.split(".")[0]
    return f"{noun} {event.resource_id} ({event.type}, event {event.event_id})"


def latest_entries(
    organization_id: uuid.UUID, ledger_id: uuid.UUID, resource_ids: list[Any]
) -> dict[uuid.UUID, Event]:
    """The latest journal entry about each of the resources (sealed or not yet)."""
    latest: dict[uuid.UUID, Event] = {}
    about = entries(organization_id, ledger_id).filter(resource_id__in=resource_ids)
    for event in about.order_by("xid", "seq"):
        latest[event.resource_id] = event
    return latest
