"""A posting on a kept database connection that the server closed since the last request
(a restart, a pooler's or a firewall's idle timeout) is posted once, on a new connection.

Django checks a connection kept from an earlier request with a ``SELECT 1`` before the
request's first statement (``CONN_HEALTH_CHECKS``) and opens a new one when that fails. When
the posting's own statement is the request's first, it is the check instead
(``health.first_statement_checks``): found closed, the request is made again on a new connection
by the view (the one place a request is made again). A connection lost later is an error, never
a second posting. The test client leaves out what Django does as a request starts, so
``_new_request`` does it.

Outside a test transaction (``transaction=True``), as a served request is, and on PostgreSQL
only (the server ends a backend here)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connection, connections, transaction

from ledgerproject.health import ConnectionGone, first_statement_checks
from tests.conftest import assert_error
from tests.transactions.conftest import other_connection_sees, payment, recorded
from transactions import engine, run
from transactions.models import Transaction

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="needs PostgreSQL: the server ends a backend (pg_terminate_backend)",
    ),
]


def _new_request() -> None:
    """What Django does to a kept connection as a request starts (``request_started``, which
    the test client leaves out): its health check is due again."""
    connection.close_if_unusable_or_obsolete()
    assert connection.health_check_enabled and not connection.health_check_done


def _backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return int(cursor.fetchone()[0])


def _terminate(pid: int) -> None:
    """The server ends the backend ``pid`` (and waits up to 5 s for it to exit), as a restart or
    an idle timeout would."""
    assert other_connection_sees(f"SELECT pg_terminate_backend({pid}, 5000)") is True


def _health_checks(monkeypatch: pytest.MonkeyPatch) -> list[None]:
    """One entry per ``SELECT 1`` Django sends to check the connection, from now on."""
    wrapper = type(connections[DEFAULT_DB_ALIAS])  # the DatabaseWrapper, not the proxy
    return recorded(monkeypatch, wrapper, "is_usable", lambda self: None)


def test_a_posting_on_a_connection_closed_since_the_last_request_is_posted_once_on_a_new_one(
    book, monkeypatch
):
    book.fund("@alice", 1_000)
    book.pay(1, 0)
    old = _backend_pid()
    checks = _health_checks(monkeypatch)
    attempts = recorded(monkeypatch, engine, "_attempt", lambda *a, **k: None)
    _new_request()
    _terminate(old)
    response = book.pay(100, 5)
    assert response.status_code == 201, response.content
    # no SELECT 1: the posting's first statement found it closed, and the view made it again
    assert checks == [] and len(attempts) == 2
    assert _backend_pid() != old
    assert book.available("@alice") == 894 and book.available("@bob") == 101
    assert Transaction.objects.filter(pk=response.json()["id"]).count() == 1


def test_a_posting_on_a_kept_connection_sends_no_health_check_of_its_own(book, monkeypatch):
    book.fund("@alice", 1_000)
    book.pay(1, 0)
    checks = _health_checks(monkeypatch)
    _new_request()
    assert book.pay(100, 5).status_code == 201
    assert checks == []
    assert connection.health_check_done  # and the rest of the request is not checked again


def test_a_block_that_sends_no_statement_leaves_django_s_check_due(book, monkeypatch):
    book.fund("@alice", 1_000)
    checks = _health_checks(monkeypatch)
    _new_request()
    with first_statement_checks():
        pass
    assert not connection.health_check_done
    assert book.balance("@alice")["available"] == 1_000
    assert checks == [None]  # Django's own check, before the request's first statement


def test_a_batch_on_a_closed_connection_is_posted_once_on_a_new_one(book, monkeypatch):
    # A batch's view reads its ledger before the engine: Django checks the connection there.
    book.fund("@alice", 1_000)
    book.pay(1, 0)
    old = _backend_pid()
    checks = _health_checks(monkeypatch)
    attempts = recorded(monkeypatch, engine, "_attempt", lambda *a, **k: None)
    _new_request()
    _terminate(old)
    items = [payment(10, 0), payment(20, 0)]
    response = book.api.post(
        f"{book.url}/transactions/batch", {"transactions": items, "atomic": True}
    )
    assert response.status_code == 201, response.content
    assert checks == [None] and len(attempts) == 1 and _backend_pid() != old
    assert book.available("@alice") == 969 and book.available("@bob") == 31


def test_a_connection_lost_after_the_first_statement_is_not_posted_again(book, monkeypatch):
    # Past the first statement the posting may have been written: it is never sent again.
    book.fund("@alice", 1_000)
    book.pay(1, 0)
    pid = _backend_pid()
    attempts = recorded(monkeypatch, engine, "_attempt", lambda *a, **k: None)
    write = run.write_posting

    def lost(*args: Any, **kwargs: Any) -> Any:
        _terminate(pid)
        return write(*args, **kwargs)

    monkeypatch.setattr(run, "write_posting", lost)
    _new_request()
    response = book.pay(100, 5)
    assert_error(response, 500, "0046")
    assert len(attempts) == 1
    monkeypatch.undo()
    assert book.available("@alice") == 999  # the server rolled it back as the backend ended


def test_a_keyed_posting_on_a_closed_connection_is_posted_once_on_a_new_one(book, monkeypatch):
    # A keyed request reads its ledger before the engine (it writes its key before the locking
    # statement, so it does not post from the process's copy): Django checks the connection
    # at that read, as for any request, and the posting runs on the new connection.
    book.fund("@alice", 1_000)
    book.pay(1, 0)
    pid = _backend_pid()
    checks = _health_checks(monkeypatch)
    _new_request()
    _terminate(pid)
    first = book.post(payment(100, 5), HTTP_IDEMPOTENCY_KEY="k-gone")
    assert first.status_code == 201, first.content
    assert checks == [None] and _backend_pid() != pid
    _new_request()
    again = book.post(payment(100, 5), HTTP_IDEMPOTENCY_KEY="k-gone")
    assert again.status_code == 201 and again.json()["id"] == first.json()["id"]
    assert book.available("@alice") == 894


def test_a_connection_known_to_be_closed_is_left_to_django_s_check(book, monkeypatch):
    book.fund("@alice", 1_000)
    book.pay(1, 0)
    checks = _health_checks(monkeypatch)
    connection.connection.close()  # libpq knows: Django's check opens a new one
    _new_request()
    response = book.pay(100, 5)
    assert response.status_code == 201, response.content
    assert checks == [None]
    assert book.available("@alice") == 894


def test_an_error_of_the_first_statement_on_an_open_connection_is_raised_as_it_is(book):
    book.fund("@alice", 1_000)
    _new_request()
    checked = first_statement_checks()
    with (
        pytest.raises(DatabaseError) as raised,
        checked,
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute("SELECT * FROM no_such_table")
    assert not isinstance(raised.value, ConnectionGone)


def test_a_first_statement_outside_a_transaction_is_never_made_again(book):
    # The server may have committed it as the connection dropped: the error is the answer.
    book.fund("@alice", 1_000)
    pid = _backend_pid()
    _new_request()
    _terminate(pid)
    with pytest.raises(DatabaseError) as raised, first_statement_checks(), connection.cursor() as c:
        c.execute("SELECT 1")
    assert not isinstance(raised.value, ConnectionGone)
    connection.close()
