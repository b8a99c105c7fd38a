"""Holds that expire, raced on PostgreSQL with real threads: a commit and the expiry of the
same transaction (exactly one wins), and several expiry workers at once (each hold canceled
once)."""

from __future__ import annotations

import datetime as dt
import io
import time

import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from organizations.models import Ledger
from tests.concurrency.conftest import run_threads
from tests.conftest import Api, soon, wait_until
from transactions import states
from transactions.expiry import expire_due
from transactions.models import Transaction

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="needs PostgreSQL: row locks and concurrent connections",
    ),
]


def _check_ledger() -> str:
    out = io.StringIO()
    call_command("check_ledger", stdout=out, stderr=io.StringIO())
    return out.getvalue()


def _held(book, count, expiry):
    book.fund("@alice", 100_000)
    return [
        book.pay(100, 1, pending=True, expiresAt=expiry.isoformat()).json()["id"]
        for _ in range(count)
    ]


def test_it_lets_exactly_one_of_a_commit_and_the_expiry_win(book):
    due = soon(2)
    pending = _held(book, 8, due)
    ledger = Ledger.objects.get(pk=book.url.rsplit("/", 1)[1])
    # The threads start a moment before the holds are due: some commits land before, some
    # after.
    wait_until(due - dt.timedelta(milliseconds=300))

    def work(index, barrier):
        tx_id = pending[index // 2]
        barrier.wait()
        time.sleep(0.3 * (index // 2) / len(pending))
        if index % 2 == 0:
            response = Api(book.api.token).post(f"{book.url}/transactions/{tx_id}/commit")
            return tx_id, "commit", response.status_code == 200
        while timezone.now() < due:
            time.sleep(0.01)
        return tx_id, "expire", states.expire(ledger=ledger, transaction_id=tx_id) is not None

    results = run_threads(len(pending) * 2, work)
    for tx_id in pending:
        won = {action: ok for t, action, ok in results if t == tx_id}
        status = Transaction.objects.get(pk=tx_id).status
        assert won["commit"] != won["expire"], (tx_id, won)
        assert status == ("SENT" if won["commit"] else "CANCELED")
    assert book.balance("@alice")["onHold"] == 0
    assert "OK" in _check_ledger()


def test_several_workers_cancel_each_expired_hold_once(book):
    due = soon(2)
    pending = _held(book, 12, due)
    wait_until(due)

    def work(index, barrier):
        barrier.wait()
        return expire_due(limit=5) + expire_due(limit=5) + expire_due(limit=5)

    done = run_threads(4, work)
    done.append(expire_due())  # what the workers skipped while another held it
    assert sum(done) == len(pending)
    assert Transaction.objects.filter(pk__in=pending, status="CANCELED").count() == len(pending)
    assert Transaction.objects.filter(parent_id__in=pending, is_reversal=True).count() == 12
    assert book.balance("@alice") == {"available": 100_000, "onHold": 0, "scale": 2}
    assert "OK" in _check_ledger()
