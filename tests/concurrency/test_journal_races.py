"""The journal under concurrent postings and concurrent sealers: every entry lands in exactly
one block, at one position, with no gap, and the chain verifies."""

from __future__ import annotations

import io
import threading
import uuid

import pytest
from django.core.management import call_command
from django.db import connection, transaction
from django.utils import timezone

from journal.models import Block
from journal.selectors import block_entries
from journal.services import entries, seal
from journal.verify import check_chain
from organizations.models import Ledger
from outbox.models import Event
from tests.concurrency.conftest import run_threads
from tests.conftest import Api

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="needs PostgreSQL: concurrent connections and transactions in flight",
    ),
]

POSTERS, SEALERS = 10, 4


def test_concurrent_postings_and_sealers_make_one_gapless_chain(book):
    book.fund("@alice", 10_000_000)
    ledger = Ledger.objects.get(pk=uuid.UUID(book.url.rsplit("/", 1)[1]))
    org, lid = ledger.organization_id, ledger.pk
    posters_left, counting = [POSTERS], threading.Lock()
    done = threading.Event()

    def post(api):
        for amount in range(1, 16):
            variables = {"amount": amount, "fee": 1, "source": "@alice", "destination": "@bob"}
            response = api.post(
                f"{book.url}/transactions",
                {"transactionTypeCode": "PAYMENT_WITH_FEE", "variables": variables},
            )
            assert response.status_code == 201, response.content

    def work(index, barrier):
        barrier.wait()
        if index >= POSTERS:  # a sealer, until the last poster is done
            blocks = 0
            while not done.is_set():
                blocks += seal(org, lid).blocks
            return blocks
        try:
            post(Api(book.api.token))
        finally:
            with counting:
                posters_left[0] -= 1
                if posters_left[0] == 0:
                    done.set()
        return 0

    sealed_by_threads = sum(run_threads(POSTERS + SEALERS, work))
    assert sealed_by_threads > 1
    seal(org, lid)
    blocks = list(Block.objects.filter(organization_id=org, ledger_id=lid).order_by("height"))
    assert [b.height for b in blocks] == list(range(len(blocks)))
    sealed = [c for b in blocks for c in block_entries(b).values_list("xid", "seq")]
    assert len(sealed) == len(set(sealed)) == entries(org, lid).count()
    assert sealed == sorted(sealed)
    assert sum(b.entry_count for b in blocks) == len(sealed)
    assert check_chain(org, lid) == []
    out = io.StringIO()
    call_command("check_ledger", stdout=out, stderr=io.StringIO())
    assert "OK" in out.getvalue()


def test_an_entry_of_a_transaction_still_running_holds_back_the_seal(book):
    """The horizon: an entry committed after an older transaction began waits for it, so the
    older one's entry can never land behind a sealed block."""
    ledger = Ledger.objects.get(pk=uuid.UUID(book.url.rsplit("/", 1)[1]))
    org, lid = ledger.organization_id, ledger.pk
    seal(org, lid)
    wrote, release = threading.Event(), threading.Event()

    def older(index, barrier):
        with transaction.atomic():  # an entry written, then left uncommitted a while
            Event.objects.create(
                type="account.updated", organization_id=org, ledger_id=lid,
                resource_id=uuid.uuid4(), created_at=timezone.now(), data={},
            )  # fmt: skip
            wrote.set()
            release.wait(30)

    def younger_then_seal(index, barrier):
        wrote.wait(30)
        book.fund("@alice", 5)  # commits after @slow's event was written
        sealed = seal(org, lid)
        release.set()
        return sealed

    _, while_running = run_threads(2, lambda i, b: (older, younger_then_seal)[i](i, b))
    assert while_running.blocks == 0 and while_running.waiting
    assert seal(org, lid).blocks == 1
    last = Block.objects.filter(organization_id=org, ledger_id=lid).order_by("-height").first()
    sealed = list(block_entries(last).values_list("type", flat=True))
    assert sealed.index("account.updated") < sealed.index("transaction.posted")
    assert check_chain(org, lid) == []
