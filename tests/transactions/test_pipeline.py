"""Two statements in one round trip (``ledgerproject.pipeline``): on PostgreSQL a posting's
BEGIN travels with the statement that locks its balances (``execute_first``), and, when its
write is the last statement of its database transaction, the write with COMMIT
(``run_and_commit``, ``writes.write_posting(commit=True)``), so its balance locks are let go
as the write ends.

These tests run outside a test transaction (``transaction=True``): inside one, the engine's
block is a savepoint, BEGIN was sent long before and nothing commits early
(``pipeline.commits_early``), so the ordinary tests never take these paths."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from django.db import DatabaseError, connection, transaction

from organizations.models import Account, Organization
from tests.conftest import assert_error
from tests.transactions.conftest import other_connection_sees, payment, recorded
from transactions import run, writes
from transactions.guards import GuardBroken
from transactions.models import IdempotencyKey, Transaction

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="needs PostgreSQL: the write and COMMIT share a libpq pipeline",
    ),
]


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """The ``commit`` of every call of the engine's write, in order."""
    return recorded(monkeypatch, run, "write_posting", lambda *a, commit=False, **k: commit)


def _committed_by(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The statements ``run_and_commit`` ran, in order."""
    return recorded(monkeypatch, writes, "run_and_commit", lambda sql, params: sql)


def test_a_posting_commits_with_its_write(book, monkeypatch):
    book.fund("@alice", 1_000)
    ran = _committed_by(monkeypatch)
    response = book.pay(100, 5)
    assert response.status_code == 201, response.content
    assert ran == [writes.WRITE_POSTING_AND_COMMIT]
    assert book.available("@alice") == 895 and book.available("@bob") == 100
    assert Transaction.objects.filter(pk=response.json()["id"]).exists()


def test_a_keyed_posting_commits_its_key_with_the_write(book, monkeypatch):
    book.fund("@alice", 1_000)
    ran = _committed_by(monkeypatch)
    first = book.post(payment(100, 5), HTTP_IDEMPOTENCY_KEY="k-1")
    assert first.status_code == 201, first.content
    assert ran == [writes.WRITE_POSTING_AND_COMMIT]
    assert IdempotencyKey.objects.filter(key="k-1").count() == 1
    again = book.post(payment(100, 5), HTTP_IDEMPOTENCY_KEY="k-1")
    assert again["Idempotent-Replayed"] == "true" and again.json() == first.json()
    assert book.available("@alice") == 895


def test_an_atomic_batch_commits_with_its_write(book, monkeypatch):
    book.fund("@alice", 1_000)
    calls = _spy(monkeypatch)
    items = [payment(10, 1)] * 3
    response = book.api.post(
        f"{book.url}/transactions/batch", {"transactions": items, "atomic": True}
    )
    assert response.status_code == 201, response.content
    assert calls == [True]
    assert book.available("@bob") == 30 and book.available("@alice") == 967


def test_a_batch_with_a_key_of_its_own_writes_the_key_after(book, monkeypatch):
    # The batch key keeps the outcome after the write: the write is not the last statement.
    book.fund("@alice", 1_000)
    calls = _spy(monkeypatch)
    items = [{"transactionTypeCode": "FUND", "variables": {"amount": 5, "account": "@bob"}}]
    response = book.api.post(
        f"{book.url}/transactions/batch",
        {"transactions": items, "atomic": False},
        HTTP_IDEMPOTENCY_KEY="batch-1",
    )
    assert response.status_code == 200, response.content
    assert calls == [False]
    assert IdempotencyKey.objects.get(key="batch-1").outcome


def test_a_batch_with_a_refused_item_lets_its_key_go_after(book, monkeypatch):
    # The refused item's key is released after the write: the write is not the last statement.
    calls = _spy(monkeypatch)
    fund = {"transactionTypeCode": "FUND", "variables": {"amount": 5, "account": "@bob"}}
    broke = payment(10, 0)  # @alice has nothing
    response = book.api.post(
        f"{book.url}/transactions/batch",
        {"transactions": [{**fund, "idempotencyKey": "a"}, {**broke, "idempotencyKey": "b"}],
         "atomic": False},
    )  # fmt: skip
    assert response.status_code == 200, response.content
    assert [item["status"] for item in response.json()] == [201, 422]
    assert calls == [False]
    assert list(IdempotencyKey.objects.values_list("key", flat=True)) == ["a"]


def test_a_guard_broken_at_a_committing_write_is_posted_again_the_ordinary_way(book, monkeypatch):
    """An account deleted while the write waited: the write that was to commit raises (so the
    COMMIT cannot keep the key taken before it), everything rolls back, and the posting runs
    again with a write that answers false, refused as before with nothing written."""
    book.fund("@alice", 1_000)
    book.pay(1, 0)  # every copy warm
    calls: list[bool] = []
    write = run.write_posting

    def deleted_meanwhile(*args: Any, commit: bool = False, **kwargs: Any) -> bool:
        calls.append(commit)
        # In the posting's own transaction, after its locks: what a delete that won the race
        # would leave (rolled back with the transaction).
        Account.objects.filter(alias="@bob").update(deleted_at="2026-01-01T00:00:00Z")
        return write(*args, commit=commit, **kwargs)

    monkeypatch.setattr(run, "write_posting", deleted_meanwhile)
    response = book.post(payment(100, 5), HTTP_IDEMPOTENCY_KEY="k-guard")
    body = assert_error(response, 422, "0024")
    assert "@bob was deleted; nothing was written" in body["description"], body
    assert calls == [True, False]
    assert not IdempotencyKey.objects.filter(key="k-guard").exists()
    assert Account.objects.get(alias="@bob").deleted_at is None  # both rolled back
    assert book.available("@alice") == 999


def test_the_write_raises_guard_broken_only_when_it_commits(book):
    from transactions.guards import Guard

    ledger_id = book.url.rsplit("/", 1)[1]
    bob = Account.objects.get(alias="@bob")
    guard = Guard.of(bob, ["BRL"], [bob.pk])
    with transaction.atomic(durable=True):
        Account.objects.filter(pk=bob.pk).update(deleted_at="2026-01-01T00:00:00Z")
        assert writes.write_posting([], [], [], guard=guard) is False
    with pytest.raises(GuardBroken), transaction.atomic(durable=True):
        writes.write_posting([], [], [], guard=guard, commit=True)
    assert Account.objects.get(pk=bob.pk).deleted_at is not None  # the first block committed
    assert Transaction.objects.filter(ledger_id=ledger_id).count() == 0


def test_a_posting_after_a_rollback_prepares_its_write_again(book):
    """psycopg deallocates the statements prepared on a connection when it rolls back; the
    committing write is entered in its list, so it is forgotten with them and prepared again
    (a name the server no longer knows would fail the posting)."""
    book.fund("@alice", 1_000)
    book.pay(1, 0)
    names = connection.connection._prepared._names
    key = (writes.WRITE_POSTING_AND_COMMIT.encode(), ("run_and_commit",))
    assert key in names
    before = names[key]
    assert_error(book.pay(10_000, 0), 422, "0018")  # refused after its locks: rolled back
    assert key not in names
    assert book.pay(2, 0).status_code == 201
    assert names[key] != before
    assert book.available("@alice") == 997


def test_it_commits_before_the_atomic_block_ends():
    from ledgerproject.pipeline import commits_early, run_and_commit

    with transaction.atomic(durable=True):
        assert commits_early()
        with transaction.atomic():
            assert not commits_early()  # a savepoint: the outer block commits
        Organization.objects.create(legal_name="Early", legal_document="1")
        assert run_and_commit("SELECT $1::text || $2::text", ["a", "b"]) == "ab"
        seen = other_connection_sees(
            "SELECT count(*) FROM organizations_organization WHERE legal_name = 'Early'"
        )
        assert seen == 1  # committed, though the block has not ended
        assert connection.connection.pgconn.transaction_status == psycopg.pq.TransactionStatus.IDLE
    assert Organization.objects.filter(legal_name="Early").count() == 1


def test_a_failing_statement_commits_nothing():
    from ledgerproject.pipeline import run_and_commit

    with pytest.raises(DatabaseError, match="division by zero"), transaction.atomic(durable=True):
        Organization.objects.create(legal_name="Never", legal_document="2")
        run_and_commit("SELECT 10 / $1::int", ["0"])
    assert not Organization.objects.filter(legal_name="Never").exists()
    # the connection is usable again, and the same statement runs again
    with transaction.atomic(durable=True):
        assert run_and_commit("SELECT 10 / $1::int", ["5"]) == "2"


def test_it_is_logged_and_wrapped_as_a_cursor_s_statement_is():
    from django.test.utils import CaptureQueriesContext

    from ledgerproject.pipeline import run_and_commit

    seen: list[str] = []

    def wrapper(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        seen.append(sql)
        return execute(sql, params, many, context)

    capture, wrapped = CaptureQueriesContext(connection), connection.execute_wrapper(wrapper)
    with capture as captured, wrapped, transaction.atomic(durable=True):
        assert run_and_commit("SELECT $1::text", ["x"]) == "x"
    assert seen == ["SELECT $1::text"]
    logged = [q["sql"] for q in captured.captured_queries]
    assert logged.count("SELECT $1::text; COMMIT") == 1, logged


def _commands(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """The commands psycopg sends on its own (BEGIN, COMMIT, ROLLBACK), in order."""
    from psycopg import _connection_base

    owner = _connection_base.BaseConnection
    return recorded(monkeypatch, owner, "_exec_command", lambda conn, command, *a, **k: command)


def test_a_posting_sends_begin_with_its_locking_statement(book, monkeypatch):
    book.fund("@alice", 1_000)
    book.pay(1, 0)
    sent = _commands(monkeypatch)
    response = book.pay(100, 5)
    assert response.status_code == 201, response.content
    # neither BEGIN nor COMMIT went on its own: BEGIN with the lock, COMMIT with the write
    assert b"BEGIN" not in sent and b"COMMIT" not in sent, sent
    assert book.available("@alice") == 894


def test_a_keyed_posting_s_transaction_is_opened_by_its_key(book, monkeypatch):
    # The key's row is written first (psycopg sends BEGIN before it); the locking statement
    # then runs in the open transaction, as any statement does.
    book.fund("@alice", 1_000)
    sent = _commands(monkeypatch)
    response = book.post(payment(100, 5), HTTP_IDEMPOTENCY_KEY="k-begin")
    assert response.status_code == 201, response.content
    # the posting's BEGIN (before its key's row; its COMMIT went with the write), then the
    # transaction that records the answer on the key after COMMIT (answers.record_answers)
    assert sent == [b"BEGIN", b"BEGIN", b"COMMIT"], sent
    assert book.available("@alice") == 895


def test_execute_first_answers_what_execute_does(book):
    from ledgerproject.pipeline import execute_first

    sql = "SELECT alias, created_at, 7 FROM organizations_account WHERE alias = ANY(%s) ORDER BY 1"
    with transaction.atomic(durable=True), connection.cursor() as cursor:
        execute_first(cursor, sql, [["@alice", "@bob"]])
        first = cursor.fetchall()
        description = [column.name for column in cursor.description]
        assert connection.connection.pgconn.transaction_status == (
            psycopg.pq.TransactionStatus.INTRANS
        )
        cursor.execute(sql, [["@alice", "@bob"]])  # in the transaction now: psycopg's way
        assert cursor.fetchall() == first
    assert [row[0] for row in first] == ["@alice", "@bob"] and first[0][2] == 7
    assert description == ["alias", "created_at", "?column?"]


def test_execute_first_outside_a_transaction_is_execute(book):
    from ledgerproject.pipeline import execute_first

    with connection.cursor() as cursor:  # autocommit: no BEGIN to send
        execute_first(cursor, "SELECT %s::int + 1", [1])
        assert cursor.fetchall() == [(2,)]


def test_a_failing_first_statement_writes_nothing_and_leaves_the_connection_usable():
    from ledgerproject.pipeline import execute_first

    failing = pytest.raises(DatabaseError, match="division by zero")
    with failing, transaction.atomic(durable=True), connection.cursor() as cursor:
        execute_first(cursor, "SELECT 10 / %s::int", [0])
    with transaction.atomic(durable=True), connection.cursor() as cursor:
        execute_first(cursor, "SELECT 10 / %s::int", [5])
        assert cursor.fetchall() == [(2,)]
