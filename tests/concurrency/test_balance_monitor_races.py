"""Postings racing across a monitor's threshold on PostgreSQL: the monitor fires once per
crossing, however many postings run at once (organizations/monitors.py: what a monitor saw is
changed only under its balances' locks and its own row's, which those postings take in turn).
A tree monitor sees postings into different accounts of its tree, each with its own balance
lock, one after the other at the monitor's row, and its sum stays exact."""

from __future__ import annotations

import pytest
from django.db import connection

from organizations.models import Balance, BalanceMonitor
from organizations.rollups import rolled_up_now
from outbox.models import Event
from tests.admin.helpers import ledger_of
from tests.concurrency.conftest import run_threads
from tests.conftest import Api

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="needs PostgreSQL: row locks and concurrent connections",
    ),
]

THREADS = 8
ROUNDS = 3


def _pay_at_once(book, payments: list[tuple[str, str]]) -> None:
    """A payment of 10.00 for each ``(source, destination)``, all at once; each is posted."""

    def pay(index, barrier):
        client = Api(book.api.token)
        barrier.wait()
        source, destination = payments[index]
        variables = {"amount": 1_000, "fee": 0, "source": source, "destination": destination}
        return client.post(
            f"{book.url}/transactions",
            {"transactionTypeCode": "PAYMENT_WITH_FEE", "variables": variables},
        )

    answers = run_threads(len(payments), pay)
    assert [r.status_code for r in answers] == [201] * len(payments)


def _watch(book, account_id: str, **rest) -> dict:
    body = {
        "accountId": account_id,
        "measure": "available",
        "condition": "below",
        "threshold": {"amount": 10_000, "scale": 2},
        **rest,
    }
    monitor = book.api.post(f"{book.url}/balance-monitors", body)
    assert monitor.status_code == 201, monitor.content
    return monitor.json()


def test_concurrent_postings_fire_a_monitor_once_per_crossing(book):
    book.fund("@alice", 16_000)  # 160.00
    _watch(book, book.accounts["@alice"]["id"])
    for round_ in range(ROUNDS):
        # Eight payments of 10.00 at once take @alice from 160.00 to 80.00: one crossing.
        _pay_at_once(book, [("@alice", "@bob")] * THREADS)
        fired = Event.objects.filter(type="balance_monitor.triggered")
        assert fired.count() == round_ + 1, round_
        # Back above: the monitor clears, and the next round crosses again.
        book.fund("@alice", 8_000)


def test_postings_into_different_accounts_of_a_tree_fire_its_monitor_once_per_crossing(book):
    cash = book.account("@cash")
    children = [f"@c{index}" for index in range(THREADS)]
    outside = [f"@out{index}" for index in range(THREADS)]
    for alias, other in zip(children, outside, strict=True):
        book.account(alias, parentAccountId=cash["id"])
        book.account(other)
        book.fund(alias, 2_000)  # 20.00 each: 160.00 under @cash
    monitor = _watch(book, cash["id"], tree=True)
    for round_ in range(ROUNDS):
        # Each child pays 10.00 out of the tree at once, no two postings sharing a balance:
        # 160.00 to 80.00, one crossing.
        _pay_at_once(book, list(zip(children, outside, strict=True)))
        fired = Event.objects.filter(type="balance_monitor.triggered")
        assert fired.count() == round_ + 1, round_
        for alias in children:
            book.fund(alias, 1_000)  # back to 160.00: cleared
    row = BalanceMonitor.objects.get(pk=monitor["id"])
    rolled = rolled_up_now(ledger_of(book), [row.account_id])[row.account_id]["BRL"]
    assert row.seen == rolled


def test_a_monitor_deleted_while_postings_run_takes_the_locks_in_their_order(book):
    """Deleting a monitor locks the balances it watches before its own row, as postings do:
    the other way round, a posting holding the balance and waiting for the monitor's row
    deadlocks with the delete holding the row and waiting for the balance."""
    book.fund("@alice", 100_000)
    for _ in range(ROUNDS):
        monitors = [_watch(book, book.accounts["@alice"]["id"]) for _ in range(2)]

        def work(index, barrier, monitors=monitors):
            client = Api(book.api.token)
            barrier.wait()
            if index < len(monitors):
                return client.delete(f"{book.url}/balance-monitors/{monitors[index]['id']}")
            variables = {"amount": 100, "fee": 0, "source": "@alice", "destination": "@bob"}
            return client.post(
                f"{book.url}/transactions",
                {"transactionTypeCode": "PAYMENT_WITH_FEE", "variables": variables},
            )

        answers = run_threads(THREADS, work)
        codes = [r.status_code for r in answers]
        assert codes == [204] * len(monitors) + [201] * (THREADS - len(monitors)), codes
        balance = Balance.objects.get(account_id=book.accounts["@alice"]["id"])
        assert balance.monitored is False  # no monitor left watching it


def test_moves_racing_postings_keep_a_tree_monitors_sum(book):
    """Accounts moved into and out of a watched tree while its accounts post: the monitor's
    kept sum is the tree's after every round (a move reads the tree again under the monitor's
    lock; a posting not yet counted adds its change after)."""
    cash = book.account("@cash")
    payers = [f"@p{index}" for index in range(THREADS - 2)]
    for alias in payers:
        book.account(alias, parentAccountId=cash["id"])
        book.account(f"{alias}/out")
        book.fund(alias, 10_000)
    for alias in ("@in", "@out"):
        book.account(alias)
        book.fund(alias, 5_000)
    moving = {"@in": cash["id"], "@out": None}
    assert (
        book.api.patch(
            f"{book.url}/accounts/{book.accounts['@out']['id']}", {"parentAccountId": cash["id"]}
        ).status_code
        == 200
    )
    monitor = _watch(book, cash["id"], tree=True)
    for _ in range(ROUNDS):
        moves = tuple(sorted(moving.items()))

        def work(index, barrier, moves=moves):
            client = Api(book.api.token)
            barrier.wait()
            if index >= len(payers):
                alias, parent = moves[index - len(payers)]
                url = f"{book.url}/accounts/{book.accounts[alias]['id']}"
                return client.patch(url, {"parentAccountId": parent})
            variables = {
                "amount": 100, "fee": 0, "source": payers[index],
                "destination": f"{payers[index]}/out",
            }  # fmt: skip
            return client.post(
                f"{book.url}/transactions",
                {"transactionTypeCode": "PAYMENT_WITH_FEE", "variables": variables},
            )

        answers = run_threads(THREADS, work)
        assert [r.status_code for r in answers] == [201] * len(payers) + [200, 200]
        row = BalanceMonitor.objects.get(pk=monitor["id"])
        rolled = rolled_up_now(ledger_of(book), [row.account_id])[row.account_id]["BRL"]
        assert row.seen == rolled
        moving = {alias: (None if parent else cash["id"]) for alias, parent in moving.items()}
