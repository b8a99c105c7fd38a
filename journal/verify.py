"""Verifying a ledger's journal against itself: each block's hash, its place in the chain, its
root, and each entry as stored now against the hash its block keeps. One pass over the blocks
and one over the entries, in order: linear in the journal's size. (Whether the books match
their journal is ``transactions.against_journal``.)

An entry found where no block covers it, between two blocks or before the first, was written
after those blocks were sealed, for no sealer leaves one there: it is named. Entries after the
last block are waiting for their seal, and are not."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

from journal import merkle
from journal.models import Block
from journal.selectors import blocks, describe, stream
from outbox.models import Event

MAX_NAMED = 20  # problems named per check of a ledger; the rest are counted


def capped(problems: list[str]) -> list[str]:
    if len(problems) <= MAX_NAMED:
        return problems
    return [*problems[:MAX_NAMED], f"and {len(problems) - MAX_NAMED} more"]


def check_chain(organization_id: uuid.UUID, ledger_id: uuid.UUID) -> list[str]:
    problems: list[str] = []
    pending = _Entries(stream(organization_id, ledger_id))
    previous: Block | None = None
    for block in blocks(organization_id, ledger_id).iterator(chunk_size=200):
        problems += _block_problems(block, previous)
        outside, sealed = pending.through(block)
        problems += [
            f"block {block.height}: {describe(e)} lies before it, where no block covers it "
            "(written after the blocks around it were sealed)"
            for e in outside
        ]
        problems += _entry_problems(block, sealed)
        previous = block
    return capped(problems)


def _block_problems(block: Block, previous: Block | None) -> list[str]:
    problems = []
    if previous is not None and block.height != previous.height + 1:
        problems.append(f"block {block.height}: comes right after block {previous.height}")
    if previous is None and block.height != 0:
        problems.append(f"block {block.height}: the ledger's first block, not numbered 0")
    expected_previous = merkle.GENESIS if previous is None else previous.hash
    if block.previous_hash != expected_previous:
        before = "the first block's" if previous is None else f"block {previous.height}'s hash"
        problems.append(
            f"block {block.height}: the chain breaks here (its previous hash is not {before})"
        )
    if merkle.block_hash(block) != block.hash:
        problems.append(f"block {block.height}: its hash does not match its header")
    leaves = merkle.leaves_of(bytes(block.leaves))
    if not leaves or len(leaves) != block.entry_count or merkle.root(leaves).hex() != block.root:
        problems.append(f"block {block.height}: its root does not match its entries' hashes")
    return problems


def _entry_problems(block: Block, sealed: list[Event]) -> list[str]:
    """Entries changed in place, or moved within the block, are named by their position.
    Otherwise (entries removed or added, which shifts the others) the block's hashes that no
    entry has now, and the entries it never sealed."""
    leaves = merkle.leaves_of(bytes(block.leaves))
    hashes = [merkle.entry_hash(merkle.entry_of(e, block.entry_form)) for e in sealed]
    stored, kept = set(hashes), set(leaves)
    if len(hashes) == len(leaves):
        wrong = [
            (position, event, found)
            for position, (event, found, leaf) in enumerate(
                zip(sealed, hashes, leaves, strict=True)
            )
            if found != leaf
        ]
        if stored == kept:
            return [
                f"block {block.height}, entry {position}: {describe(event)} is not where the "
                "block sealed it (entries moved)"
                for position, event, _ in wrong
            ]
        if not any(found in kept for _, _, found in wrong):
            return [
                f"block {block.height}, entry {position}: {describe(event)} no longer matches "
                "its hash"
                for position, event, _ in wrong
            ]
    return [
        f"block {block.height}, entry {position}: missing (no entry stored in the block's range "
        "has its hash: removed or changed)"
        for position, leaf in enumerate(leaves)
        if leaf not in stored
    ] + [
        f"block {block.height}: {describe(event)} is not an entry it sealed (added or changed)"
        for event, found in zip(sealed, hashes, strict=True)
        if found not in kept
    ]


class _Entries:
    """The journal's entries in order, handed out block by block."""

    def __init__(self, events: Iterator[Event]) -> None:
        self._events = events
        self._next = next(events, None)

    def through(self, block: Block) -> tuple[list[Event], list[Event]]:
        """The entries up to the block's last: those before its first (where no block should
        have any), and its own."""
        outside: list[Event] = []
        taken: list[Event] = []
        while self._next is not None and (self._next.xid, self._next.seq) <= block.last:
            cursor = (self._next.xid, self._next.seq)
            (taken if cursor >= block.first else outside).append(self._next)
            self._next = next(self._events, None)
        return outside, taken
