"""Closing a period races postings into it: once the close commits, nothing effective in the
period lands. The close takes the ledger's row exclusively and every write checks its effective
times on the row it share-locks, so either the posting holds the row first (the close waits for
it to commit) or the close does (the posting waits, then finds the period closed)."""

from __future__ import annotations

import datetime as dt
import threading
import time

import pytest
from django.db import connection
from django.utils import timezone

from organizations import services as organization_services
from organizations.models import Ledger
from tests.concurrency.conftest import run_threads
from tests.conftest import Api
from tests.transactions.conftest import payment
from transactions import run as posting_run
from transactions.models import Transaction

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="needs PostgreSQL: concurrent connections and row locks",
    ),
]

THREADS = 8


def _through() -> dt.date:
    return timezone.now().date() - dt.timedelta(days=2)


def _in_period() -> str:
    return dt.datetime.combine(_through(), dt.time(12), tzinfo=dt.UTC).isoformat()


def _close(book) -> None:
    response = Api(book.api.token).patch(book.url, {"closedThrough": _through().isoformat()})
    assert response.status_code == 200, response.content


def _paused(monkeypatch, owner, name, reached: threading.Event, go: threading.Event) -> None:
    """``owner.name`` runs as before, then waits for ``go`` (its database transaction open)."""
    original = getattr(owner, name)

    def pausing(*args, **kwargs):
        result = original(*args, **kwargs)
        if threading.current_thread() is not threading.main_thread():
            reached.set()
            assert go.wait(timeout=30)
        return result

    monkeypatch.setattr(owner, name, pausing)


def test_a_close_waits_for_a_posting_that_holds_the_ledger(book, monkeypatch):
    book.fund("@alice", 10_000)
    written, go = threading.Event(), threading.Event()
    _paused(monkeypatch, posting_run, "write_posting", written, go)
    answers: dict[str, object] = {}

    def post():
        try:
            answers["post"] = Api(book.api.token).post(
                f"{book.url}/transactions", {**payment(100, 0), "effectiveAt": _in_period()}
            )
        finally:
            connection.close()

    def close():
        try:
            _close(book)
            answers["closed"] = timezone.now()
        finally:
            connection.close()

    poster = threading.Thread(target=post)
    poster.start()
    assert written.wait(timeout=30)  # written, not committed: the ledger's row is share-locked
    closer = threading.Thread(target=close)
    closer.start()
    time.sleep(0.5)
    assert closer.is_alive() and "closed" not in answers  # the close waits for the posting
    go.set()
    poster.join(timeout=30)
    closer.join(timeout=30)
    assert answers["post"].status_code == 201, answers["post"].content
    assert "closed" in answers
    assert Ledger.objects.get().closed_through == _through()


def test_a_posting_waits_for_a_close_that_holds_the_ledger_then_is_refused(book, monkeypatch):
    book.fund("@alice", 10_000)
    locked, go = threading.Event(), threading.Event()
    _paused(monkeypatch, organization_services.periods, "closing", locked, go)
    answers: dict[str, object] = {}

    def close():
        try:
            _close(book)
        finally:
            connection.close()

    def post():
        try:
            answers["post"] = Api(book.api.token).post(
                f"{book.url}/transactions", {**payment(100, 0), "effectiveAt": _in_period()}
            )
        finally:
            connection.close()

    closer = threading.Thread(target=close)
    closer.start()
    assert locked.wait(timeout=30)  # the ledger's row held exclusively, the close not committed
    poster = threading.Thread(target=post)
    poster.start()
    time.sleep(0.5)
    assert poster.is_alive()  # it read the period open, and waits on the ledger's row
    go.set()
    closer.join(timeout=30)
    poster.join(timeout=30)
    assert answers["post"].status_code == 422, answers["post"].content
    assert answers["post"].json()["code"] == "0124"
    assert not Transaction.objects.filter(amount=100).exists()


def test_many_postings_race_a_close(book):
    """Postings into the period from many threads while it closes: each either committed
    before the close did or was refused with 0124, nothing else. What the database holds of
    the period the moment the close has committed is all it ever holds."""
    book.fund("@alice", 10_000_000)
    seen_after_close: list[int] = []

    def work(index, barrier):
        api = Api(book.api.token)
        barrier.wait()
        if index == 0:
            time.sleep(0.05)
            _close(book)
            # A statement begun after the close committed sees every posting that committed
            # before it.
            seen_after_close.append(Transaction.objects.filter(amount=1).count())
            return []
        statuses = []
        for _ in range(15):
            response = api.post(
                f"{book.url}/transactions", {**payment(1, 0), "effectiveAt": _in_period()}
            )
            statuses.append(response.status_code)
            if response.status_code == 422:
                assert response.json()["code"] == "0124", response.content
        return statuses

    statuses = [s for each in run_threads(THREADS, work) for s in each]
    assert set(statuses) <= {201, 422}
    assert 422 in statuses
    in_period = Transaction.objects.filter(amount=1).count()
    assert in_period == statuses.count(201) == seen_after_close[0]


def test_closes_and_a_delete_racing_each_other_never_fail(book):
    """Closing takes the ledger's row exclusively as the first lock of its transaction: two
    closes, and a close and the ledger's delete, wait for each other instead of deadlocking."""
    days = [2, 3, 4, 5]

    def work(index, barrier):
        api = Api(book.api.token)
        barrier.wait()
        if index == len(days):
            return api.delete(book.url).status_code
        through = (timezone.now().date() - dt.timedelta(days=days[index])).isoformat()
        response = api.patch(book.url, {"closedThrough": through})
        if response.status_code >= 400:
            return response.json()["code"]
        return response.status_code

    statuses = run_threads(len(days) + 1, work)
    assert statuses[-1] == 204, statuses
    # A close that came after the delete finds the ledger gone (0013 when it read the ledger
    # deleted, 0008 when the delete committed while it waited), never a 500.
    assert set(statuses[:-1]) <= {200, "0013", "0008"}, statuses


def test_a_posting_after_a_reopen_is_judged_on_the_ledger_as_it_is(book):
    """A process keeps a copy of the ledger for its postings: a change of the ledger (its
    period, above all) makes the copy stale, so a posting after a reopen is not refused from
    the copy of the closed ledger."""
    book.fund("@alice", 10_000)
    api = Api(book.api.token)
    _close(book)
    body = {**payment(100, 0), "effectiveAt": _in_period()}
    for _ in range(2):  # the second one from the process's copies
        refused = api.post(f"{book.url}/transactions", body)
        assert refused.status_code == 422 and refused.json()["code"] == "0124"
    assert api.patch(book.url, {"closedThrough": None}).status_code == 200
    assert api.post(f"{book.url}/transactions", body).status_code == 201
