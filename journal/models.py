"""A ledger's journal: its events, sealed into a chain of blocks.

The journal's entries are the ledger's events (``outbox.Event``) in the events' own order,
``(xid, seq)`` (``outbox.selectors``): every change to the books already writes one in its
database transaction, so the journal costs a posting nothing. A block covers the entries after
the previous block's last, up to its own ``last_xid``/``last_seq``, and keeps their hashes
(``leaves``), their Merkle root and the previous block's hash (``journal.merkle``). Blocks are
written once, by the sealer (``journal.services.seal``), and never changed: the database
refuses an update or a delete (``sql/block_append_only.*``)."""

from __future__ import annotations

from django.db import models

from ledgerproject.db import new_id


class Block(models.Model):
    id = models.UUIDField(primary_key=True, default=new_id, editable=False)
    organization_id = models.UUIDField()
    ledger_id = models.UUIDField()
    height = models.PositiveBigIntegerField()
    entry_count = models.PositiveIntegerField()
    # The cursors of the first and last entries it seals, in the events' order.
    first_xid = models.BigIntegerField()
    first_seq = models.BigIntegerField()
    last_xid = models.BigIntegerField()
    last_seq = models.BigIntegerField()
    root = models.CharField(max_length=64)
    previous_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64)
    leaves = models.BinaryField()
    sealed_at = models.DateTimeField()
    # The form its entries were hashed in (``journal.merkle.entry_of``): a later form is a new
    # number, and a block keeps the one it was sealed with.
    entry_form = models.PositiveSmallIntegerField(default=1)

    class Meta:
        ordering = ["organization_id", "ledger_id", "height"]
        constraints = [
            # Two sealers that raced for the next block: one of them commits it.
            models.UniqueConstraint(
                fields=["organization_id", "ledger_id", "height"], name="journal_block_height"
            ),
            models.CheckConstraint(
                condition=models.Q(entry_count__gt=0), name="journal_block_not_empty"
            ),
        ]
        indexes = [
            models.Index(
                fields=["organization_id", "ledger_id", "last_xid", "last_seq"],
                name="journal_block_last_idx",
            )
        ]

    def __str__(self) -> str:
        return f"block {self.height} of ledger {self.ledger_id}"

    @property
    def first(self) -> tuple[int, int]:
        """The events cursor ``(xid, seq)`` of its first entry."""
        return self.first_xid, self.first_seq

    @property
    def last(self) -> tuple[int, int]:
        return self.last_xid, self.last_seq
