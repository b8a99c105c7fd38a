"""Two statements in one round trip, through libpq's pipeline mode (PostgreSQL only).

A posting's database transaction is BEGIN, the statement that locks its balances, the write
and COMMIT. psycopg sends BEGIN on its own before the first statement, and Django sends COMMIT
on its own when the atomic block ends: each is a round trip in which the process and the
server wait for each other, and the COMMIT's is spent holding the balance locks. Here BEGIN
travels with the first statement (``execute_first``) and COMMIT with the last
(``run_and_commit``), so a posting is two round trips inside its transaction instead of four.

psycopg's own pipeline mode does the same for any statement, at a cost in Python per
statement that was more than the round trip saved. These two talk to
libpq directly and lean on a few of psycopg's internals, each named where it is used: the
cursor's query conversion and result setting (``_convert_query``, ``_set_results``), the
connection's BEGIN text (``_get_tx_start_command``) and its list of prepared statements
(``_prepared._names``). tests/transactions/test_pipeline.py runs every one of them,
so an upgrade of psycopg that changes them fails there.

Prepared statements: each statement is prepared on the connection the first time, in the same
round trip, and entered in psycopg's list of the statements prepared on it. psycopg
deallocates all of them when the transaction rolls back (and the oldest past its maximum),
which removes this one from the list too: it is then prepared again. Behind a pooler in
transaction mode (``prepare_threshold`` None) nothing is prepared: ``run_and_commit`` parses
its statement each time, and ``execute_first`` leaves psycopg to send BEGIN.

The health check: Django spends a round trip (``SELECT 1``) checking a kept connection before
a request's first statement. A posting whose first statement is the engine's (a single posting
without a key) skips it (``first_statement_checks``): that statement is the check, and a
connection it finds closed is let go and the posting run again by the engine, on a new one."""

from __future__ import annotations

import contextlib
import functools
import itertools
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from django.db import DEFAULT_DB_ALIAS, Error, OperationalError, connections
from psycopg import adapt, generators, pq
from psycopg import errors as psycopg_errors

_numbers = itertools.count()
_OK, _TUPLES = pq.ExecStatus.COMMAND_OK, pq.ExecStatus.TUPLES_OK
_FATAL, _SYNC = pq.ExecStatus.FATAL_ERROR, pq.ExecStatus.PIPELINE_SYNC
_IDLE = pq.TransactionStatus.IDLE


class ConnectionGone(OperationalError):
    """The first statement sent in ``first_statement_checks`` found the connection closed:
    nothing had been sent on it in the block before, so nothing was written."""


@contextlib.contextmanager
def first_statement_checks() -> Iterator[None]:
    """Django checks a connection kept from an earlier request (``CONN_HEALTH_CHECKS``) with a
    ``SELECT 1`` round trip before the request's first statement. In this block the first
    statement is the check instead: if it fails and the connection is then closed, the
    connection is let go and ``ConnectionGone`` raised (the caller runs the block's work
    again, and its first statement opens a new connection); any other error is raised as it
    is, and so is any error of a statement sent with COMMIT (``run_and_commit``), which may
    have committed. A block that sends no statement leaves the check due. Where no check is
    pending (a new connection, or one already used in this request), where the connection is
    known to be closed (Django's check then opens a new one), or inside a transaction, the
    block changes nothing."""
    db: Any = connections[DEFAULT_DB_ALIAS]  # django-stubs do not know the health check's fields
    if (
        db.vendor != "postgresql"
        or db.connection is None
        or not db.health_check_enabled
        or db.health_check_done
        or db.in_atomic_block
        or db.connection.closed
    ):
        yield
        return
    db.health_check_done = True  # Django's check is skipped: the first statement makes it
    first = True

    def check(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
        nonlocal first
        if not first:
            return execute(sql, params, many, context)
        first = False
        try:
            return execute(sql, params, many, context)
        except Error as exc:
            if context.get("commits") or (db.connection is not None and not db.connection.closed):
                raise
            db.close()  # the next statement, after the block's transaction, opens a new one
            raise ConnectionGone(str(exc)) from exc

    try:
        with db.execute_wrapper(check):
            yield
    finally:
        if first:  # no statement was sent: the request's next one is checked as Django does
            db.health_check_done = False


def commits_early() -> bool:
    """Whether the database transaction may be committed before its atomic block ends
    (``run_and_commit``): PostgreSQL, and the block is the outermost one, which Django commits
    on leaving (not a savepoint, as a block inside a test's transaction is)."""
    db = connections[DEFAULT_DB_ALIAS]
    return (
        db.vendor == "postgresql"
        and len(db.atomic_blocks) == 1
        and not db.savepoint_ids
        and db.commit_on_exit
    )


def run_and_commit(sql: str, params: Sequence[str]) -> Any:
    """Run ``sql`` (inside the current database transaction, placeholders ``$1``, ``$2``, ...
    each given as text) and COMMIT, in one round trip: the server commits as soon as the
    statement ends, and the rows it locked are let go a round trip sooner. Answers the first
    column of the statement's first row, as text.

    If the statement fails, the COMMIT is not run (the pipeline skips what follows an error)
    and the transaction is left failed: the error is raised as Django raises a database
    error, and leaving the atomic block rolls back. A statement that must refuse to commit
    raises. After it, the connection is out of its transaction, so the caller runs no other
    statement in the atomic block (psycopg's commit at its end then has nothing to do;
    ``commits_early`` says when the block may be left so)."""

    db = connections[DEFAULT_DB_ALIAS]

    def run(sql: str, params: Sequence[str], many: bool, context: Any) -> Any:
        key = (sql.encode(), ("run_and_commit",))  # no key of psycopg's: its types are numbers
        values = [p.encode() for p in params]
        results = _exchange(db, b"", key, None, values, None, b"COMMIT")
        value = next(r for r in results if r.status == _TUPLES).get_value(0, 0)
        return None if value is None else bytes(value).decode()

    return _logged(db, run, sql, params, f"{sql}; COMMIT", None, commits=True)


def execute_first(shared: Any, sql: str, params: Sequence[Any]) -> None:
    """``shared.execute(sql, params)`` (a Django cursor, ``%s`` placeholders), with the BEGIN
    that psycopg would send first in the same round trip when the statement opens the
    database transaction; the rows are fetched from ``shared`` as after ``execute``. Anywhere
    else (a transaction already open, autocommit, nothing prepared, not PostgreSQL), exactly
    ``shared.execute``."""
    db = connections[DEFAULT_DB_ALIAS]
    raw = shared.cursor
    if (
        db.vendor != "postgresql"
        or raw.connection.autocommit
        or raw.connection.prepare_threshold is None
        or raw.connection.pgconn.transaction_status != _IDLE
    ):
        shared.execute(sql, params)
        return
    db.validate_no_broken_transaction()

    def run(sql: str, params: Sequence[Any], many: bool, context: Any) -> None:
        raw._reset()  # psycopg: what Cursor.execute does before a statement of another text
        raw._last_query = None
        raw._tx = adapt.Transformer(raw)
        query = raw._convert_query(sql, params)  # psycopg: "$n" text, dumped values, types
        key = (query.query, query.types)  # psycopg's own key: it may share the statement
        begin = raw.connection._get_tx_start_command()  # psycopg: BEGIN with its options
        results = _exchange(db, begin, key, query.types, query.params, query.formats, b"")
        raw._query = query
        raw._set_results([next(r for r in results if r.status == _TUPLES)])

    _logged(db, run, sql, params, sql, shared)


def _exchange(
    db: Any,
    before: bytes,
    key: tuple[bytes, tuple[Any, ...]],
    types: Sequence[int] | None,
    values: Sequence[Any],
    formats: Sequence[Any] | None,
    after: bytes,
) -> list[Any]:
    """``before`` (if any), the statement ``key[0]`` (its parameters' ``types``, None to let
    the server infer them) with ``values``, then ``after`` (if any), in one round trip on
    ``db``'s connection; answers the results, or raises the first error as Django would.
    ``key`` is the statement's entry in psycopg's list of prepared statements."""
    with db.wrap_database_errors:
        conn = db.connection
        pgconn = conn.pgconn
        names = conn._prepared._names  # psycopg: {key: name} of its prepared statements
        name = names.get(key) if conn.prepare_threshold is not None else b""
        preparing = name is None
        with conn.lock:
            pgconn.enter_pipeline_mode()
            try:
                if before:
                    pgconn.send_query_params(before, None)
                if name is None:
                    name = b"ledger_%d" % next(_numbers)
                    pgconn.send_prepare(name, key[0], param_types=types)
                if name:
                    pgconn.send_query_prepared(name, values, param_formats=formats)
                else:
                    pgconn.send_query_params(key[0], values, param_formats=formats)
                if after:
                    pgconn.send_query_params(after, None)
                pgconn.pipeline_sync()
                results = conn.wait(_pipeline_results(pgconn))
            finally:
                if pgconn.pipeline_status:
                    pgconn.exit_pipeline_mode()
        if preparing:
            if results[1 if before else 0].status == _OK:
                names[key] = name
                conn._prepared._counts.pop(key, None)  # psycopg: its count towards preparing
        elif name:
            names.move_to_end(key)  # recently used: the last psycopg would deallocate
        for result in results:
            if result.status == _FATAL:
                raise psycopg_errors.error_from_result(result, encoding=conn.info.encoding)
        return results


def _pipeline_results(pgconn: Any) -> Any:
    """A psycopg generator: flush what was queued, then read every result up to the sync."""
    yield from generators.send(pgconn)
    results: list[Any] = []
    while True:
        got = yield from generators.fetch_many(pgconn)
        if got and got[0].status == _SYNC:
            return results
        results += got


def _logged(
    db: Any,
    run: Callable[[str, Sequence[Any], bool, Any], Any],
    sql: str,
    params: Sequence[Any],
    logged_as: str,
    cursor: Any,
    *,
    commits: bool = False,
) -> Any:
    """``run`` through the connection's execute wrappers and, when Django logs queries, into
    its log as ``logged_as``, as a statement run through a cursor is. ``commits``: the
    statement is sent with COMMIT (the wrappers find it in their context)."""
    execute: Any = run
    for wrapper in reversed(db.execute_wrappers):
        execute = functools.partial(wrapper, execute)
    context = {"connection": db, "cursor": cursor, "commits": commits}
    if not db.queries_logged:
        return execute(sql, params, False, context)
    started = time.monotonic()
    try:
        return execute(sql, params, False, context)
    finally:
        elapsed = time.monotonic() - started
        db.queries_log.append({"sql": logged_as, "time": f"{elapsed:.3f}"})
