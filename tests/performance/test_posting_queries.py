"""The number of queries of one posting through the API, so that it cannot creep up.

Per posting on PostgreSQL, inside the transaction: the accounts read with their balances
locked, the check that the cached template is unchanged (the template itself is read once per
process), and the authentication epoch and the ledger's state that confirm the token and the
ledger kept in memory (1; the token and the ledger are read once per process and again only when
the epoch moves: ``transactions.copies``), and one statement that
checks the instrument and writes the transaction, its operations and the new balances (1).
Inside a test the durable atomic block is a savepoint (2 statements); in production it is
BEGIN/COMMIT. SQLite reads the ledger with its organization in one join, checks the instrument
apart and writes in three statements.

Reading the accounts in the statement that locks their balances took one statement off the
PostgreSQL count (6 -> 5); confirming the ledger kept in memory there, instead of reading
it first, another (5 -> 4).

The outbox (issue 16): on PostgreSQL the posting's event travels in the same statement as the
transaction (no query added); SQLite inserts it apart (one query added, 12 -> 13).

A posting into an account no monitor watches reads no monitor (``Balance.monitored``); one into a
watched tree adds three queries, however large the tree.
"""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

PER_POSTING = {"postgresql": 4, "sqlite": 13}
PAYMENT = {
    "transactionTypeCode": "PAYMENT_WITH_FEE",
    "variables": {"amount": 10, "fee": 0, "source": "@alice", "destination": "@bob"},
}


def _queries(call) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        response = call()
    assert response.status_code in (200, 201), response.content
    return [q["sql"] for q in captured.captured_queries]


@pytest.fixture
def funded(book):
    book.fund("@alice", 1_000_000)
    book.pay(1, 0)  # the template compiled and every cache warm
    return book


def test_a_posting_takes_a_fixed_number_of_queries(funded):
    queries = _queries(lambda: funded.pay(2_500, 100))
    assert len(queries) == PER_POSTING[connection.vendor], "\n".join(queries)


def test_a_posting_with_more_legs_takes_no_more_queries(funded):
    funded.account("@carol")
    few = _queries(lambda: funded.pay(10, 0))
    many = _queries(lambda: funded.pay(10, 5, destination="@carol"))
    assert len(few) == len(many)


def test_a_posting_into_a_watched_account_adds_one_query(funded):
    """The monitors of the posting's accounts found and locked in one statement; a condition
    that stays as it was writes nothing."""
    plain = _queries(lambda: funded.pay(10, 0))
    body = {"accountId": funded.accounts["@alice"]["id"], "measure": "available",
            "condition": "below", "threshold": {"amount": 0, "scale": 0}}  # fmt: skip
    assert funded.api.post(f"{funded.url}/balance-monitors", body).status_code == 201
    watched = _queries(lambda: funded.pay(10, 0))
    assert len(watched) - len(plain) == 1, "\n".join(watched)


def test_a_posting_into_a_watched_tree_adds_two_queries_whatever_its_size(funded):
    """The monitors above the posting's accounts found by one walk up the tree and their rows
    locked, in one statement, and one update of the one monitor whose sum changed; the size
    of the tree does not count (organizations/monitors.py keeps the sum it watches)."""
    plain = _queries(lambda: funded.pay(10, 0, destination="@fees/platform"))
    cash = funded.account("@cash")
    moved = funded.api.patch(
        f"{funded.url}/accounts/{funded.accounts['@alice']['id']}", {"parentAccountId": cash["id"]}
    )
    assert moved.status_code == 200, moved.content
    body = {"accountId": cash["id"], "tree": True, "measure": "available",
            "condition": "below", "threshold": {"amount": 0, "scale": 0}}  # fmt: skip
    assert funded.api.post(f"{funded.url}/balance-monitors", body).status_code == 201
    watched = _queries(lambda: funded.pay(10, 0, destination="@fees/platform"))
    assert len(watched) - len(plain) == 2, "\n".join(watched)
    for index in range(30):
        funded.account(f"@till{index}", parentAccountId=cash["id"])
    bigger = _queries(lambda: funded.pay(10, 0, destination="@fees/platform"))
    assert len(bigger) == len(watched)


def test_an_idempotent_posting_adds_only_the_key_queries(funded):
    plain = _queries(lambda: funded.pay(10, 0))
    keyed = _queries(lambda: funded.post(PAYMENT, HTTP_IDEMPOTENCY_KEY="k-1"))
    # the lookup before the work, the lock and re-check inside it (PostgreSQL), the insert; on
    # PostgreSQL a keyed posting also reads its ledger first (a key's row is written before
    # the locking statement could confirm the process's copy: transactions.copies)
    assert len(keyed) - len(plain) == (5 if connection.vendor == "postgresql" else 3)


def test_a_replay_answers_without_posting(funded):
    funded.post(PAYMENT, HTTP_IDEMPOTENCY_KEY="k-2")
    replay = _queries(lambda: funded.post(PAYMENT, HTTP_IDEMPOTENCY_KEY="k-2"))
    assert not any(q.lstrip().upper().startswith("INSERT") for q in replay)
    assert len(replay) <= 4


def _statements_by_cursor(monkeypatch, call) -> list[tuple[int, str]]:
    """``(the cursor's identity, the statement)`` of every statement ``call`` runs."""
    from django.db.backends.utils import CursorDebugWrapper

    ran: list[tuple[int, str]] = []
    for name in ("execute", "executemany"):
        original = getattr(CursorDebugWrapper, name)

        def recorded(self, sql, *args, _original=original, **kwargs):
            ran.append((id(self.cursor), sql))
            return _original(self, sql, *args, **kwargs)

        monkeypatch.setattr(CursorDebugWrapper, name, recorded)
    _queries(call)
    return ran


@pytest.mark.postgres
@pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="on SQLite the balances are read and the rows written by the ORM, cursor by cursor",
)
def test_the_posting_s_own_statements_share_one_cursor(funded, monkeypatch):
    """The balances' lock and the write run on one cursor (``db.one_cursor``): making a cursor
    cost more Python than a short statement. Before, each statement made its own."""
    funded.pay(10, 0)
    ran = _statements_by_cursor(monkeypatch, lambda: funded.pay(10, 0))
    lock = [c for c, sql in ran if "FOR UPDATE" in sql.upper()]
    write = [c for c, sql in ran if "ledger_write_posting" in sql or "SET available" in sql]
    assert lock and write, ran
    assert len(set(lock + write)) == 1, ran


@pytest.mark.django_db
def test_the_shared_cursor_is_only_shared_inside_its_block() -> None:
    from django.db import Error

    from ledgerproject.db import cursor, one_cursor

    with cursor() as alone:
        pass
    with pytest.raises(Error):
        alone.execute("SELECT 1")  # closed on leaving: it was its own
    with one_cursor() as shared:
        with cursor() as first:
            first.execute("SELECT 1")
        with cursor() as second:
            second.execute("SELECT 2")  # left open by the first block
            assert second is first is shared
    with pytest.raises(Error):
        shared.execute("SELECT 1")  # closed by its owner
    with cursor() as after:
        assert after is not shared
        after.execute("SELECT 1")
