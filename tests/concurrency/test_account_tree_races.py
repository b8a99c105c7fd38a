"""Changes of the account tree racing each other on PostgreSQL: two crossing moves (X under Y,
Y under X) never both succeed, and a child is never created under an account being deleted.
Every change of the tree's shape takes the ledger's row FOR NO KEY UPDATE
(organizations/account_tree.py); postings, which take it FOR KEY SHARE, are not held up by it.
(An update that is not a move never undoes one: tests/transactions/test_account_trees.py.)"""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from organizations.account_tree import MAX_DEPTH
from organizations.locking import ledger_write
from organizations.models import Account, Ledger
from tests.concurrency.conftest import run_threads
from tests.conftest import Api

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="needs PostgreSQL: row locks and concurrent connections",
    ),
]

ROUNDS = 10


def _assert_a_forest(ledger_id: str) -> None:
    """Every account reaches a root within MAX_DEPTH levels: no cycle, no branch too deep."""
    parents = dict(
        Account.objects.filter(ledger_id=ledger_id).values_list("pk", "parent_account_id")
    )
    for start in parents:
        seen, current = 0, parents[start]
        while current is not None:
            seen += 1
            assert seen < MAX_DEPTH, f"{start} is in a cycle or too deep"
            current = parents[current]


def _url(book, alias: str) -> str:
    return f"{book.url}/accounts/{book.accounts[alias]['id']}"


def test_crossing_moves_never_make_a_cycle(book):
    for round_ in range(ROUNDS):
        x, y = book.account(f"@x{round_}"), book.account(f"@y{round_}")
        pairs = [(f"@x{round_}", y["id"]), (f"@y{round_}", x["id"])]

        def work(index, barrier, pairs=pairs):
            alias, parent = pairs[index]
            barrier.wait()
            return Api(book.api.token).patch(_url(book, alias), {"parentAccountId": parent})

        answers = sorted(response.status_code for response in run_threads(2, work))
        assert answers == [200, 422], answers
        _assert_a_forest(book.accounts["@alice"]["ledgerId"])


def test_a_child_is_never_created_under_an_account_being_deleted(book):
    created_under_deleted = 0
    for round_ in range(ROUNDS):
        parent = book.account(f"@parent{round_}")

        def work(index, barrier, parent=parent, round_=round_):
            api = Api(book.api.token)
            barrier.wait()
            if index == 0:
                return api.delete(f"{book.url}/accounts/{parent['id']}")
            return api.post(
                f"{book.url}/accounts",
                {"assetCode": "BRL", "alias": f"@child{round_}", "parentAccountId": parent["id"]},
            )

        deleted, created = run_threads(2, work)
        assert sorted([deleted.status_code, created.status_code]) in ([201, 422], [204, 422])
        if created.status_code == 201:
            assert deleted.status_code == 422  # the parent has a child now
        created_under_deleted += Account.objects.filter(
            parent_account_id=parent["id"], parent_account__deleted_at__isnull=False,
            deleted_at__isnull=True,
        ).count()  # fmt: skip
    assert created_under_deleted == 0


def test_moves_and_postings_run_together(book):
    """Moves and postings run together: each side finishes, the books balance, the tree is a
    forest."""
    book.fund("@alice", 10_000)
    book.account("@group")
    book.account("@other")

    def work(index, barrier):
        api = Api(book.api.token)
        barrier.wait()
        answers = []
        for step in range(10):
            if index == 0:
                parent = book.accounts["@group" if step % 2 else "@other"]["id"]
                answers.append(api.patch(_url(book, "@alice"), {"parentAccountId": parent}))
            else:
                variables = {"amount": 1, "fee": 0, "source": "@alice", "destination": "@bob"}
                body = {"transactionTypeCode": "PAYMENT_WITH_FEE", "variables": variables}
                answers.append(api.post(f"{book.url}/transactions", body))
        return [response.status_code for response in answers]

    moves, postings = run_threads(2, work)
    assert moves == [200] * 10 and postings == [201] * 10
    _assert_a_forest(book.accounts["@alice"]["ledgerId"])
    assert book.available("@bob") == 10


def test_a_posting_is_not_held_up_by_a_change_of_the_tree(book):
    """While a change of the account tree holds its lock, a posting into the same ledger
    commits without waiting (a lock a posting would wait for times out after 2 s here)."""
    book.fund("@alice", 100)
    ledger = Ledger.objects.get()
    holding, release = threading.Event(), threading.Event()

    def hold(index, barrier):
        with ledger_write(ledger, account_tree=True):
            holding.set()
            assert release.wait(timeout=30)

    holder = threading.Thread(target=run_threads, args=(1, hold))
    holder.start()
    try:
        assert holding.wait(timeout=30)
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '2s'")
        assert book.pay(10, 0).status_code == 201
        assert book.available("@bob") == 10
    finally:
        release.set()
        holder.join(timeout=30)
        with connection.cursor() as cursor:
            cursor.execute("RESET lock_timeout")


def test_an_update_and_a_delete_of_one_account_never_deadlock(book):
    """An update that changes the overdraft limit locks the account's row, then its balance;
    the delete takes them in that order too (before, it took the balance first: each waited for
    the other, and PostgreSQL aborted one)."""
    for round_ in range(ROUNDS * 2):
        account = book.account(f"@gone{round_}")

        def work(index, barrier, account=account):
            api = Api(book.api.token)
            url = f"{book.url}/accounts/{account['id']}"
            barrier.wait()
            if index == 0:
                return api.delete(url)
            return api.patch(url, {"overdraftLimit": {"amount": 100, "scale": 2}})

        deleted, updated = run_threads(2, work)
        assert deleted.status_code == 204, deleted.content
        # Before the delete, or after it: 400 0013, already removed.
        assert updated.status_code == 200 or updated.json()["code"] == "0013", updated.content
