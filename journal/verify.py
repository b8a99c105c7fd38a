"""Verifying a ledger's journal against itself: each block's hash, its place in the chain, its
root, and each entry's hash against the entry as it is stored now. One pass over the blocks
and one over the entries, in order: linear in the journal's size. (Whether the books match
their journal is ``transactions.integrity.check_books_match_journal``.)"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

from journal import merkle
from journal.models import Block
from journal.selectors import blocks, describe, stream
from journal.services import header_of
from outbox.events import event_body
from outbox.models import Event

MAX_NAMED = 20  # entries named per ledger; the rest are counted


def check_chain(organization_id: uuid.UUID, ledger_id: uuid.UUID) -> list[str]:
    problems: list[str] = []
    unmatched = 0
    pending = _Entries(stream(organization_id, ledger_id))
    previous: Block | None = None
    for block in blocks(organization_id, ledger_id).iterator(chunk_size=200):
        problems += _block_problems(block, previous)
        leaves = merkle.leaves_of(bytes(block.leaves))
        sealed = pending.through(block)
        ends = [(e.xid, e.seq) for e in (sealed[0], sealed[-1])] if sealed else []
        if len(sealed) != len(leaves) or ends != [
            (block.first_xid, block.first_seq),
            (block.last_xid, block.last_seq),
        ]:
            problems.append(
                f"block {block.height}: seals {len(leaves)} entries, {len(sealed)} are stored "
                "in its range (entries were removed or added)"
            )
        for position, (event, leaf) in enumerate(zip(sealed, leaves, strict=False)):
            if merkle.entry_hash(event_body(event)) != leaf:
                unmatched += 1
                if unmatched <= MAX_NAMED:
                    problems.append(
                        f"block {block.height}, entry {position}: {describe(event)} no longer "
                        "matches its hash"
                    )
        previous = block
    if unmatched > MAX_NAMED:
        problems.append(f"and {unmatched - MAX_NAMED} more entries that no longer match")
    return problems


def _block_problems(block: Block, previous: Block | None) -> list[str]:
    expected_height = 0 if previous is None else previous.height + 1
    problems = []
    if block.height != expected_height:
        problems.append(f"block {block.height}: comes after block {expected_height - 1}")
    expected_previous = merkle.GENESIS if previous is None else previous.hash
    if block.previous_hash != expected_previous:
        problems.append(
            f"block {block.height}: the chain breaks here (its previous hash is not the hash of "
            f"block {expected_height - 1})"
        )
    if merkle.block_hash(header_of(block)) != block.hash:
        problems.append(f"block {block.height}: its hash does not match its header")
    leaves = merkle.leaves_of(bytes(block.leaves))
    if not leaves or len(leaves) != block.entry_count or merkle.root(leaves).hex() != block.root:
        problems.append(f"block {block.height}: its root does not match its entries' hashes")
    return problems


class _Entries:
    """The journal's entries in order, handed out block by block."""

    def __init__(self, events: Iterator[Event]) -> None:
        self._events = events
        self._next = next(events, None)

    def through(self, block: Block) -> list[Event]:
        """The entries up to the block's last; those before its first (left between two
        blocks, where none should be) are passed over."""
        first, last = (block.first_xid, block.first_seq), (block.last_xid, block.last_seq)
        taken = []
        while self._next is not None and (self._next.xid, self._next.seq) <= last:
            if (self._next.xid, self._next.seq) >= first:
                taken.append(self._next)
            self._next = next(self._events, None)
        return taken
