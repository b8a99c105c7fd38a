"""What the journal hashes, and how; all SHA-256 (docs/BOOKS.md holds the same rules for a
verifier).

- An entry is its event as ``entry_of`` writes it, in a numbered form fixed here (``FORM``;
  each block records the form it was sealed in), so that a later change to the API's rendering
  of events changes no hash: a new field in the entries is a new form. Its bytes are that
  document in canonical JSON: UTF-8, keys sorted, no whitespace, no escaping beyond JSON's own
  (``canonical``).
- An entry's hash is ``SHA-256(0x00 || bytes)``; a node's is ``SHA-256(0x01 || left || right)``;
  a block's root is the Merkle tree hash of its entries' hashes in order, the tree of RFC 9162
  (Certificate Transparency): the left subtree holds the largest power of two entries smaller
  than the whole. The prefixes keep an entry from passing for a node.
- A block's hash is ``SHA-256`` of its header (``header_of``) in canonical JSON; the header
  holds the previous block's hash, so each block fixes every block before it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Sequence
from typing import Any

from journal.models import Block
from outbox.models import Event

GENESIS = "0" * 64  # the previous hash of a ledger's first block
FORM = 2  # the form new blocks hash their entries in; form 1 is form 2 without "reason"
TIME = "%Y-%m-%dT%H:%M:%S+0000"  # the journal's own, whatever the API's becomes


def _time(value: dt.datetime) -> str:
    return value.astimezone(dt.UTC).strftime(TIME)


def entry_of(event: Event, form: int = FORM) -> dict[str, Any]:
    """An event as the journal hashes it (and a proof shows it), in ``form``: form 2 adds the
    reason staff gave (null when none) to form 1."""
    if form not in (1, 2):
        raise ValueError(f"no entry form {form}")
    reason = {"reason": event.reason} if form == 2 else {}
    return {
        "id": str(event.event_id),
        "type": event.type,
        "organizationId": str(event.organization_id),
        "ledgerId": str(event.ledger_id),
        "resourceId": str(event.resource_id),
        "createdAt": _time(event.created_at),
        "actor": {"kind": event.actor_kind, "name": event.actor_name, "id": event.actor_id},
        "requestId": event.request_id or None,
        "clientAddress": event.client_address,
        **reason,
        "data": event.data,
    }


def header_of(block: Block) -> dict[str, Any]:
    """A block as its hash covers it."""
    return {
        "ledgerId": str(block.ledger_id),
        "height": block.height,
        "entryCount": block.entry_count,
        "root": block.root,
        "previousHash": block.previous_hash,
        "sealedAt": _time(block.sealed_at),
        "entryForm": block.entry_form,
    }


def canonical(value: Any) -> bytes:
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode()


def entry_hash(entry: dict[str, Any]) -> bytes:
    return hashlib.sha256(b"\x00" + canonical(entry)).digest()


def _node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(n: int) -> int:
    """The largest power of two smaller than ``n`` (``n`` > 1)."""
    return 1 << ((n - 1).bit_length() - 1)


def root(leaves: Sequence[bytes]) -> bytes:
    if not leaves:
        raise ValueError("a block holds at least one entry")
    if len(leaves) == 1:
        return leaves[0]
    k = _split(len(leaves))
    return _node(root(leaves[:k]), root(leaves[k:]))


def path(leaves: Sequence[bytes], index: int) -> list[bytes]:
    """The audit path of the leaf at ``index``: the sibling hashes from the leaf up (RFC 9162,
    2.1.3.1)."""
    if len(leaves) == 1:
        return []
    k = _split(len(leaves))
    if index < k:
        return [*path(leaves[:k], index), root(leaves[k:])]
    return [*path(leaves[k:], index - k), root(leaves[:k])]


def root_from_path(leaf: bytes, index: int, size: int, siblings: Sequence[bytes]) -> bytes | None:
    """The root that ``siblings`` lead to from ``leaf`` at ``index`` of ``size`` leaves; None
    when the path does not fit the tree's shape (RFC 9162, 2.1.3.2)."""
    if not 0 <= index < size:
        return None
    fn, sn, r = index, size - 1, leaf
    for sibling in siblings:
        if sn == 0:
            return None
        if fn & 1 or fn == sn:
            r = _node(sibling, r)
            while not fn & 1 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            r = _node(r, sibling)
        fn, sn = fn >> 1, sn >> 1
    return r if sn == 0 else None


def block_hash(block: Block) -> str:
    return hashlib.sha256(canonical(header_of(block))).hexdigest()


def leaves_of(packed: bytes) -> list[bytes]:
    """A block's stored entry hashes (32 bytes each, in order)."""
    return [packed[i : i + 32] for i in range(0, len(packed), 32)]
