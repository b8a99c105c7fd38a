"""The Merkle tree of RFC 9162: every leaf's path leads to the root, and nothing else does."""

from __future__ import annotations

import hashlib

from journal import merkle


def _leaves(n):
    return [hashlib.sha256(bytes([i % 256, i // 256])).digest() for i in range(n)]


def test_every_leaf_path_leads_to_the_root_for_every_size():
    for size in range(1, 70):
        leaves = _leaves(size)
        root = merkle.root(leaves)
        for index in range(size):
            path = merkle.path(leaves, index)
            assert merkle.root_from_path(leaves[index], index, size, path) == root
            assert len(path) <= size.bit_length()


def test_a_wrong_leaf_position_or_size_leads_elsewhere():
    leaves = _leaves(11)
    root = merkle.root(leaves)
    path = merkle.path(leaves, 4)
    assert merkle.root_from_path(leaves[5], 4, 11, path) != root
    assert merkle.root_from_path(leaves[4], 5, 11, path) != root
    assert merkle.root_from_path(leaves[4], 4, 40, path) != root
    assert merkle.root_from_path(leaves[4], 11, 11, path) is None


def test_known_values_of_rfc_9162_shapes():
    a, b, c = _leaves(3)
    node = lambda x, y: hashlib.sha256(b"\x01" + x + y).digest()  # noqa: E731
    assert merkle.root([a]) == a
    assert merkle.root([a, b]) == node(a, b)
    assert merkle.root([a, b, c]) == node(node(a, b), c)
    assert (
        merkle.entry_hash({"b": 1, "a": "é"})
        == hashlib.sha256(b'\x00{"a":"\xc3\xa9","b":1}').digest()
    )
