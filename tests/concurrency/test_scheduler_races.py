"""The scheduler raced on PostgreSQL with real threads: several schedulers at once post each
due posting exactly once and commit each due hold once, and a cancel racing the scheduler
leaves each posting either posted (once) or canceled (with nothing posted)."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.utils import timezone

from organizations.models import Ledger
from tests.concurrency.conftest import run_threads
from transactions import scheduling
from transactions.models import ScheduledPosting, Transaction

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="needs PostgreSQL: row locks and concurrent connections",
    ),
]

COUNT = 24


def _later() -> str:
    return (timezone.now() + dt.timedelta(hours=1)).isoformat()


def _schedule_payments(book, count: int) -> list[str]:
    book.fund("@alice", 1_000_000)
    ids = []
    for i in range(count):
        response = book.pay(100 + i, 10, scheduledFor=_later())
        assert response.status_code == 202, response.content
        ids.append(response.json()["id"])
    ScheduledPosting.objects.update(scheduled_for=timezone.now() - dt.timedelta(minutes=1))
    return ids


def _scheduler(index, barrier) -> scheduling.Pass:
    barrier.wait()
    total = scheduling.Pass()
    while done := scheduling.post_due(limit=5):
        total.add(done)
    return total


def test_several_schedulers_post_each_due_posting_exactly_once(book):
    ids = _schedule_payments(book, COUNT)
    passes = run_threads(4, _scheduler)
    assert sum(p.posted for p in passes) == COUNT
    assert sum(p.failed for p in passes) == 0
    rows = ScheduledPosting.objects.filter(pk__in=ids)
    assert {row.status for row in rows} == {"POSTED"}
    made = Transaction.objects.filter(type="PAYMENT_WITH_FEE")
    assert made.count() == COUNT
    assert set(made.values_list("id", flat=True)) == {row.transaction_id for row in rows}
    assert book.available("@alice") == 1_000_000 - sum(110 + i for i in range(COUNT))


def test_schedulers_on_the_same_rows_post_each_once(book, monkeypatch):
    """No lease: every scheduler takes every row, so what keeps each to one posting is the
    row's lock, taken inside the posting's transaction."""
    monkeypatch.setattr(scheduling, "LEASE", dt.timedelta(0))
    ids = _schedule_payments(book, COUNT)
    passes = run_threads(4, _scheduler)
    assert sum(p.posted for p in passes) == COUNT
    rows = ScheduledPosting.objects.filter(pk__in=ids)
    assert {row.status for row in rows} == {"POSTED"}
    made = Transaction.objects.filter(type="PAYMENT_WITH_FEE")
    assert made.count() == COUNT
    assert book.available("@alice") == 1_000_000 - sum(110 + i for i in range(COUNT))


def test_a_cancel_racing_the_scheduler_leaves_posted_or_canceled_never_both(book):
    ids = _schedule_payments(book, COUNT)
    ledger = Ledger.objects.get(pk=book.url.rsplit("/", 1)[1])

    def work(index, barrier):
        if index == 0:
            return _scheduler(index, barrier)
        barrier.wait()
        canceled = 0
        for pk in ids[index - 1 :: 2]:  # the two cancellers share the rows
            try:
                scheduling.cancel(ledger, pk)
                canceled += 1
            except scheduling.LedgerError:
                pass  # posted first
        return canceled

    results = run_threads(3, work)
    rows = list(ScheduledPosting.objects.filter(pk__in=ids))
    posted = [row for row in rows if row.status == "POSTED"]
    canceled = [row for row in rows if row.status == "CANCELED"]
    assert len(posted) + len(canceled) == COUNT
    assert len(canceled) == results[1] + results[2]
    assert results[0].posted == len(posted)
    made = Transaction.objects.filter(type="PAYMENT_WITH_FEE")
    assert set(made.values_list("id", flat=True)) == {row.transaction_id for row in posted}
    assert book.available("@alice") == 1_000_000 - sum(
        row.variables["amount"] + 10 for row in posted
    )


def test_several_schedulers_commit_each_due_hold_once(book):
    book.fund("@alice", 1_000_000)
    holds = []
    for i in range(COUNT):
        held_before = (timezone.now() - dt.timedelta(minutes=10)).isoformat()
        response = book.pay(100 + i, 10, pending=True, commitAt=_later(), effectiveAt=held_before)
        assert response.status_code == 201, response.content
        holds.append(response.json()["id"])
    Transaction.objects.filter(pk__in=holds).update(
        commit_at=timezone.now() - dt.timedelta(minutes=1)
    )
    passes = run_threads(4, _scheduler)
    assert sum(p.committed for p in passes) == COUNT
    assert sum(p.commits_refused for p in passes) == 0
    assert set(Transaction.objects.filter(pk__in=holds).values_list("status", flat=True)) == {
        "SENT"
    }
    assert book.available("@bob") == sum(100 + i for i in range(COUNT))
