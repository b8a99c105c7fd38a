"""The journal's hashes, all SHA-256 (docs/BOOKS.md holds the same rules for a verifier).

- An entry's bytes are its event as the events API sends it, in canonical JSON: UTF-8, keys
  sorted, no whitespace, no escaping beyond JSON's own (``canonical``).
- An entry's hash is ``SHA-256(0x00 || bytes)``; a node's is ``SHA-256(0x01 || left || right)``;
  a block's root is the Merkle tree hash of its entries' hashes in order, the tree of RFC 9162
  (Certificate Transparency): the left subtree holds the largest power of two entries smaller
  than the whole. The prefixes keep an entry from passing for a node.
- A block's hash is ``SHA-256`` of its header (``header``) in canonical JSON; the header holds
  the previous block's hash, so each block fixes every block before it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

GENESIS = "0" * 64  # the previous hash of a ledger's first block


def canonical(value: Any) -> bytes:
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode()


def entry_hash(body: Any) -> bytes:
    return hashlib.sha256(b"\x00" + canonical(body)).digest()


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


def header(
    *,
    ledger_id: str,
    height: int,
    entry_count: int,
    root_hex: str,
    previous_hash: str,
    sealed_at: str,
) -> dict[str, Any]:
    return {
        "ledgerId": ledger_id,
        "height": height,
        "entryCount": entry_count,
        "root": root_hex,
        "previousHash": previous_hash,
        "sealedAt": sealed_at,
    }


def block_hash(block_header: dict[str, Any]) -> str:
    return hashlib.sha256(canonical(block_header)).hexdigest()


def leaves_of(packed: bytes) -> list[bytes]:
    """A block's stored entry hashes (32 bytes each, in order)."""
    return [packed[i : i + 32] for i in range(0, len(packed), 32)]
