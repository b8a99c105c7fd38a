"""Sealing a ledger's journal: its entries not yet in a block become the next block.

A sealer reads the ledger's events after the last block's, in order and only those that can
no longer be overtaken (``outbox.selectors.events_after``: on PostgreSQL nothing at or above
the oldest transaction still running), hashes them, and writes the block and its
``block.sealed`` event in one database transaction. Postings never wait for it: they write
their events and go; nothing a posting locks is locked here. Two sealers of one ledger do not
both work: on PostgreSQL the first takes the ledger's sealer lock (an advisory lock that only
sealers take, in a key space of its own) and the other leaves the entries to it; were two ever
to build the same block, the unique height would let one commit it. ``seal`` answers what it
sealed, and whether more is waiting."""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from journal import merkle
from journal.models import Block
from ledgerproject.db import by_database
from outbox import events
from outbox.models import Event
from outbox.selectors import events_after, past

log = logging.getLogger("ledger.journal")

MAX_ENTRIES = 1000  # per block: a proof's path stays short and a block's read small
SEALER_LOCK_CLASS = 7301  # the advisory locks' first key, for the journal's sealers


@dataclass(frozen=True)
class Sealed:
    blocks: int  # blocks this call wrote
    # Entries committed after the last block are left: a transaction older than them is still
    # running, or another sealer took the height this one wanted.
    waiting: bool


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
    return None if block is None else block.last


class _Busy(Exception):
    """Another sealer holds the ledger."""


def _sealer_lock_postgresql(ledger_id: uuid.UUID) -> bool:
    """The ledger's sealer lock, held to the end of the database transaction; False at once
    when another sealer holds it (which then seals these entries too). Only sealers take it:
    a posting never waits for it."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_try_advisory_xact_lock(%s, hashtext(%s))",
            [SEALER_LOCK_CLASS, str(ledger_id)],
        )
        return bool(cursor.fetchone()[0])


def _sealer_lock_sqlite(ledger_id: uuid.UUID) -> bool:
    return True  # writers are serialized: a sealer has the database to itself


sealer_lock = by_database(postgresql=_sealer_lock_postgresql, sqlite=_sealer_lock_sqlite)


def seal(organization_id: uuid.UUID, ledger_id: uuid.UUID, *, max_blocks: int = 100) -> Sealed:
    """Seal what can be sealed of the ledger's journal, a block of up to ``MAX_ENTRIES``
    entries at a time. Another sealer at work on the ledger is left to it."""
    written = 0
    while written < max_blocks:
        try:
            block = _seal_one(organization_id, ledger_id)
        except _Busy:  # another sealer holds the ledger: its blocks hold these entries
            return Sealed(written, waiting=True)
        except IntegrityError:
            # Another sealer committed this height first, which the lock keeps from happening
            # on PostgreSQL: said, since it points at a sealer that took no lock.
            log.warning("A sealer of ledger %s lost the race for a block.", ledger_id)
            return Sealed(written, waiting=True)
        if block is None:
            break
        written += 1
        if block.entry_count < MAX_ENTRIES:
            break  # all it could read; what committed since is for ``waiting`` to say
    last = _cursor(head(organization_id, ledger_id))
    waiting = past(entries(organization_id, ledger_id), last).exists()
    return Sealed(written, waiting=waiting)


def _seal_one(organization_id: uuid.UUID, ledger_id: uuid.UUID) -> Block | None:
    with transaction.atomic(durable=True):
        if not sealer_lock(ledger_id):
            raise _Busy
        previous = head(organization_id, ledger_id)
        rows = list(
            events_after(entries(organization_id, ledger_id), _cursor(previous))[:MAX_ENTRIES]
        )
        if not rows:
            return None
        leaves = [merkle.entry_hash(merkle.entry_of(e, merkle.FORM)) for e in rows]
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
            entry_form=merkle.FORM,
        )
        block.hash = merkle.block_hash(block)
        block.save(force_insert=True)
        events.build(events.BLOCK_SEALED, block).save(force_insert=True)
        return block
