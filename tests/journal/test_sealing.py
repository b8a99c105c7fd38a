"""Sealing: a ledger's events become a chain of blocks, with proofs that verify."""

from __future__ import annotations

import io
import uuid

from django.core.management import call_command

from journal import merkle, sealer
from journal.models import Block
from journal.selectors import proofs
from journal.services import Sealed, entries, seal
from journal.verify import check_chain


def _ids(book):
    from organizations.models import Ledger

    ledger = Ledger.objects.get(pk=uuid.UUID(book.url.rsplit("/", 1)[1]))
    return ledger.organization_id, ledger.pk


def test_it_seals_every_entry_once_in_order(book):
    book.fund("@alice", 5_000)
    book.pay(100, 5)
    org, ledger = _ids(book)
    first = seal(org, ledger)
    assert first.blocks == 1 and not first.waiting
    book.pay(200, 10)
    assert seal(org, ledger).blocks == 1
    assert seal(org, ledger).blocks == 0
    blocks = list(Block.objects.filter(ledger_id=ledger).order_by("height"))
    assert [b.height for b in blocks] == [0, 1]
    assert blocks[0].previous_hash == merkle.GENESIS
    assert blocks[1].previous_hash == blocks[0].hash
    assert sum(b.entry_count for b in blocks) == entries(org, ledger).count()
    assert check_chain(org, ledger) == []


def test_a_proof_leads_from_the_entry_to_its_block(book):
    book.fund("@alice", 5_000)
    paid = book.pay(100, 5).json()
    for _ in range(4):
        book.pay(1, 0)
    org, ledger = _ids(book)
    seal(org, ledger)
    sealed, unsealed = proofs(org, ledger, uuid.UUID(paid["id"]))
    assert unsealed == [] and len(sealed) == 1
    (proof,) = sealed
    leaf = merkle.entry_hash(merkle.entry_of(proof.event))
    root = merkle.root_from_path(leaf, proof.position, proof.block.entry_count, proof.path)
    assert root is not None and root.hex() == proof.block.root


def test_seal_journal_seals_what_is_waiting(book):
    book.fund("@alice", 5_000)
    out = io.StringIO()
    call_command("seal_journal", stdout=out)
    assert "Sealed 1 block(s); 0 ledger(s)" in out.getvalue()
    org, ledger = _ids(book)
    assert check_chain(org, ledger) == []
    call_command("seal_journal", "--ledger", str(ledger), stdout=out)
    assert "Sealed 0 block(s)" in out.getvalue()


def test_a_large_backlog_is_sealed_in_blocks_of_at_most_max_entries(book, monkeypatch):
    monkeypatch.setattr("journal.services.MAX_ENTRIES", 3)
    book.fund("@alice", 5_000)
    for amount in range(1, 5):
        book.pay(amount, 0)
    org, ledger = _ids(book)
    total = entries(org, ledger).count()
    sealed = seal(org, ledger)
    assert sealed.blocks == -(-total // 3)
    counts = list(Block.objects.filter(ledger_id=ledger).values_list("entry_count", flat=True))
    assert counts[:-1] == [3] * (len(counts) - 1) and sum(counts) == total
    assert check_chain(org, ledger) == []


def test_the_sealer_backs_off_while_sealing_fails_and_forgets_once_it_works(monkeypatch):
    asked: list[float] = []

    class Recording(sealer.Sealer):
        def wake(self, organization_id, ledger_id, delay=sealer.DELAY):
            asked.append(delay)

    def broken(*key):
        raise RuntimeError("the database is gone")

    monkeypatch.setattr(sealer.services, "seal", broken)
    recording, key = Recording(), (uuid.uuid4(), uuid.uuid4())
    for _ in range(8):
        recording._seal(key)
    assert asked == [min(sealer.BACKOFF_MAX, sealer.RETRY * 2**n) for n in range(8)]
    assert asked[-1] == sealer.BACKOFF_MAX
    monkeypatch.setattr(sealer.services, "seal", lambda *key: Sealed(1, waiting=False))
    recording._seal(key)
    assert asked[8:] == [] and key not in recording._failures
