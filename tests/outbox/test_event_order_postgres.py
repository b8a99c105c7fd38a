"""The events API's order under concurrency, on PostgreSQL with real threads and connections:
an event written by a transaction that commits late is never skipped by a reader who already
read past later events, and 1,000 concurrent postings give exactly 1,000 posted events, read
exactly once and in order by a client polling with its cursor during the load."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from django.db import connection, transaction
from django.utils import timezone

from outbox.models import Event
from outbox.serializers import decode_cursor
from tests.concurrency.conftest import run_threads
from tests.conftest import Api
from transactions.models import Transaction

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="needs PostgreSQL: transaction ids and concurrent connections",
    ),
]

POSTINGS = 1000
WRITERS = 8


def _read_after(api: Api, url: str, cursor: str | None, **params: Any) -> list[dict[str, Any]]:
    """Every event past ``cursor`` visible now, following the pages."""
    seen: list[dict[str, Any]] = []
    while True:
        query = {"limit": 1000, **params, **({"cursor": cursor} if cursor else {})}
        response = api.get(f"{url}/events", query)
        assert response.status_code == 200, response.content
        page = response.json()
        seen += page
        if not page or "Link" not in response:
            return seen
        cursor = page[-1]["cursor"]


def _read_until(api: Api, url: str, cursor: str | None, count: int, **params: Any) -> list[Any]:
    """Events past ``cursor`` until ``count`` are readable. The horizon is the cluster's oldest
    running transaction, in any database, so another session's long transaction delays (never
    reorders or loses) what becomes readable: wait for it, within bounds."""
    deadline = time.monotonic() + 120
    seen = _read_after(api, url, cursor, **params)
    while len(seen) < count and time.monotonic() < deadline:
        time.sleep(0.1)
        more = _read_after(api, url, seen[-1]["cursor"] if seen else cursor, **params)
        seen += more
    return seen


def _event(ledger: dict[str, Any], kind: str) -> None:
    Event.objects.create(
        type=kind,
        organization_id=ledger["organizationId"],
        ledger_id=ledger["id"],
        resource_id=ledger["id"],
        created_at=timezone.now(),
        data={},
    )


def test_an_event_that_commits_late_is_not_skipped(api, ledger, ledger_url):
    cursor = _read_until(api, ledger_url, None, 1)[-1]["cursor"]
    written, release = threading.Event(), threading.Event()

    def slow() -> None:  # takes its transaction id first, commits last
        try:
            with transaction.atomic():
                _event(ledger, "ledger.updated")
                written.set()
                assert release.wait(30)
        finally:
            connection.close()

    thread = threading.Thread(target=slow)
    thread.start()
    assert written.wait(30)
    try:
        fast = threading.Thread(
            target=lambda: (_event(ledger, "ledger.deleted"), connection.close())
        )
        fast.start()
        fast.join(30)
        # The later transaction has committed, but an earlier one is still running: its event
        # is held back, or the reader would move its cursor past the slow one's place.
        assert _read_after(api, ledger_url, cursor) == []
    finally:
        release.set()
        thread.join(30)
    assert [e["type"] for e in _read_until(api, ledger_url, cursor, 2)] == [
        "ledger.updated",
        "ledger.deleted",
    ]


def test_concurrent_postings_are_read_once_and_in_order(book):
    book.fund("@alice", 10 * POSTINGS)
    for index in range(WRITERS):
        book.account(f"@to{index}")
    known = Event.objects.filter(ledger_id=book.accounts["@alice"]["ledgerId"]).count()
    start = _read_until(book.api, book.url, None, known)[-1]["cursor"]
    done = threading.Event()
    polled: list[dict[str, Any]] = []
    polls = [0]
    give_up = [float("inf")]

    def reader() -> None:
        cursor = start
        try:
            while True:
                finished = done.is_set()
                page = _read_after(book.api, book.url, cursor, type="transaction.posted")
                polled.extend(page)
                polls[0] += 1
                if page:
                    cursor = page[-1]["cursor"]
                if finished and len(polled) >= POSTINGS:
                    return
                if finished and time.monotonic() > give_up[0]:
                    return
                time.sleep(0.05)
        finally:
            connection.close()

    poller = threading.Thread(target=reader)
    poller.start()

    def writer(index: int, barrier: threading.Barrier) -> int:
        api = Api(book.api.token)
        barrier.wait()
        ok = 0
        for _ in range(POSTINGS // WRITERS):
            variables = {"amount": 10, "fee": 0, "source": "@alice", "destination": f"@to{index}"}
            response = api.post(
                f"{book.url}/transactions",
                {"transactionTypeCode": "PAYMENT_WITH_FEE", "variables": variables},
            )
            assert response.status_code == 201, response.content
            ok += 1
        return ok

    try:
        assert sum(run_threads(WRITERS, writer)) == POSTINGS
    finally:
        give_up[0] = time.monotonic() + 120
        done.set()
        poller.join(180)
    assert not poller.is_alive()
    assert polls[0] > 1, "the reader polled during the load"
    ids = [e["id"] for e in polled]
    assert len(ids) == POSTINGS and len(set(ids)) == POSTINGS
    keys = [decode_cursor(e["cursor"]) for e in polled]
    assert keys == sorted(keys) and len(set(keys)) == POSTINGS
    posted = set(
        Transaction.objects.filter(ledger_id=book.accounts["@alice"]["ledgerId"])
        .exclude(type="FUND")
        .values_list("id", flat=True)
    )
    assert {e["resourceId"] for e in polled} == {str(pk) for pk in posted}
    assert Event.objects.filter(type="transaction.posted").count() == POSTINGS + 1  # + funding
