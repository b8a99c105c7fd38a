"""How a block and a proof render (the API, and the ``block.sealed`` event)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from journal import merkle
from journal.models import Block
from journal.selectors import EntryProof
from outbox import renderers
from outbox.models import Event
from outbox.serializers import encode_cursor


def block_data(block: Block) -> dict[str, Any]:
    """The block: its header (what its hash covers), its hash, and where its entries are."""
    return {
        "id": str(block.id),
        "organizationId": str(block.organization_id),
        **merkle.header_of(block),
        "hash": block.hash,
        "firstEntryCursor": encode_cursor(Event(xid=block.first_xid, seq=block.first_seq)),
        "lastEntryCursor": encode_cursor(Event(xid=block.last_xid, seq=block.last_seq)),
    }


renderers.register(Block, "block", block_data, plain=True)


def proof_data(proof: EntryProof) -> dict[str, Any]:
    return {
        "entry": merkle.entry_of(proof.event, proof.block.entry_form),
        "entryHash": proof.entry_hash.hex(),
        "position": proof.position,
        "path": [sibling.hex() for sibling in proof.path],
        "block": block_data(proof.block),
    }


class BlockOut(serializers.Serializer):
    """A sealed block of a ledger's journal (rendered by ``block_data``)."""

    id = serializers.UUIDField()
    organizationId = serializers.UUIDField()
    ledgerId = serializers.UUIDField()
    height = serializers.IntegerField(help_text="0 for the ledger's first block.")
    entryCount = serializers.IntegerField()
    # The field ``root`` shadows ``Field.root`` (a serializer's top) for a type checker only.
    root = serializers.CharField(  # type: ignore[assignment]
        help_text="The Merkle root of its entries' hashes (hex)."
    )
    previousHash = serializers.CharField(help_text="The previous block's hash; 64 zeros first.")
    hash = serializers.CharField(help_text="SHA-256 of the block's header in canonical JSON.")
    sealedAt = serializers.CharField()
    entryForm = serializers.IntegerField(
        help_text="The form its entries are hashed in: 2 (with the reason staff gave), or 1 "
        "for blocks sealed before it (docs/BOOKS.md)."
    )
    firstEntryCursor = serializers.CharField(
        help_text="The events cursor of its first entry (GET .../events?cursor= reads after it)."
    )
    lastEntryCursor = serializers.CharField()


class EntryProofOut(serializers.Serializer):
    entry = serializers.JSONField(help_text="The entry: the event as the events API sends it.")
    entryHash = serializers.CharField(help_text="SHA-256(0x00 || canonical JSON of entry), hex.")
    position = serializers.IntegerField(help_text="The entry's index in its block, from 0.")
    path = serializers.ListField(
        child=serializers.CharField(), help_text="The Merkle audit path, from the leaf up (hex)."
    )
    block = BlockOut()


class ProofOut(serializers.Serializer):
    transactionId = serializers.UUIDField()
    sealed = serializers.BooleanField(help_text="False while an entry waits for its block.")
    proofs = EntryProofOut(many=True, help_text="One per sealed entry about the transaction.")
    unsealedEntries = serializers.IntegerField()
