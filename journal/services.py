"""Sealing a ledger's journal: its entries not yet in a block become the next block.

A sealer reads the ledger's events after the last block's, in order and only those that can
no longer be overtaken (``outbox.selectors.events_after``: on PostgreSQL nothing at or above
the oldest transaction still running), hashes them, and writes the block and its
``block.sealed`` event in one database transaction. Postings never wait for it: they write
their events and go; nothing a posting locks is locked here. Two sealers of one ledger may
race: both build the next block, the database's unique height lets one commit it, and the
other finds its work done (``seal`` answers what it sealed, and whether more is waiting)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from journal import merkle
from journal.models import Block
from ledgerproject.formats import render_timestamp
from outbox import events
from outbox.models import Event
from outbox.selectors import events_after, past

MAX_ENTRIES = 1000  # per block: a proof's path stays short and a block's read small


@dataclass(frozen=True)
class Sealed:
    blocks: int  # blocks this call wrote
    waiting: bool  # entries committed after the last block that could not be sealed yet


def entries(organization_id: uuid.UUID, ledger_id: uuid.UUID) -> Any:
    """The ledger's journal entries: its events, but the journal's own."""
    return Event.objects.filter(organization_id=organization_id, ledger_id=ledger_id).exclude(
        type=events.BLOCK_SEALED
    )


def head(organization_id: uuid.UUID, ledger_id: uuid.UUID) -> Block | None:
    return (
        Block.objects.filter(organization_id=organization_id, ledger_id=ledger_id)
        .order_by("-height")
        .first()
    )


def _cursor(block: Block | None) -> tuple[int, int] | None:
    return None if block is None else (block.last_xid, block.last_seq)


def seal(organization_id: uuid.UUID, ledger_id: uuid.UUID, *, max_blocks: int = 100) -> Sealed:
    """Seal what can be sealed of the ledger's journal, a block of up to ``MAX_ENTRIES``
    entries at a time."""
    written = 0
    while written < max_blocks:
        try:
            block = _seal_one(organization_id, ledger_id)
        except IntegrityError:
            # Another sealer committed this height first: its block holds these entries.
            return Sealed(written, waiting=True)
        if block is None:
            break
        written += 1
    last = _cursor(head(organization_id, ledger_id))
    waiting = past(entries(organization_id, ledger_id), last).exists()
    return Sealed(written, waiting=waiting)


def _seal_one(organization_id: uuid.UUID, ledger_id: uuid.UUID) -> Block | None:
    with transaction.atomic(durable=True):
        previous = head(organization_id, ledger_id)
        rows = list(
            events_after(entries(organization_id, ledger_id), _cursor(previous))[:MAX_ENTRIES]
        )
        if not rows:
            return None
        leaves = [merkle.entry_hash(events.event_body(e)) for e in rows]
        sealed_at = timezone.now()
        block = Block(
            organization_id=organization_id,
            ledger_id=ledger_id,
            height=0 if previous is None else previous.height + 1,
            entry_count=len(rows),
            first_xid=rows[0].xid,
            first_seq=rows[0].seq,
            last_xid=rows[-1].xid,
            last_seq=rows[-1].seq,
            root=merkle.root(leaves).hex(),
            previous_hash=merkle.GENESIS if previous is None else previous.hash,
            leaves=b"".join(leaves),
            sealed_at=sealed_at,
        )
        block.hash = merkle.block_hash(header_of(block))
        block.save(force_insert=True)
        events.build(events.BLOCK_SEALED, block).save(force_insert=True)
        return block


def header_of(block: Block) -> dict[str, object]:
    return merkle.header(
        ledger_id=str(block.ledger_id),
        height=block.height,
        entry_count=block.entry_count,
        root_hex=block.root,
        previous_hash=block.previous_hash,
        sealed_at=render_timestamp(block.sealed_at) or "",
    )
