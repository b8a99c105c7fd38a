"""A connection kept from an earlier request, checked by a posting's first statement instead of
Django's ``SELECT 1`` round trip before it (docs/DECISIONS.md)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from django.db import DatabaseError, OperationalError, connection

from ledgerproject.kept import Stale


class ConnectionGone(Stale, OperationalError):
    """The first statement of a ``first_statement_checks`` block, sent inside a database
    transaction, found the kept connection closed: that transaction never committed, and no
    statement of the block had run before it, so nothing of the block was written."""


@contextlib.contextmanager
def first_statement_checks() -> Iterator[None]:
    """In this block a connection kept from an earlier request is checked by the block's first
    statement, not by Django's ``SELECT 1`` round trip before it (``CONN_HEALTH_CHECKS``). If
    that statement fails and the connection is then closed, the connection is let go and
    ``ConnectionGone`` raised, but only if the statement ran inside a database transaction
    (one that cannot have committed): the caller runs its work again, and the next statement
    opens a new connection. A first statement outside a transaction may have been committed by
    the server as the connection dropped, so its error is raised as it is (the request fails
    once, as without the check); so is any other error, and any error after the first
    statement. A block that sends no statement leaves Django's check due. Where no check is
    due (a new connection, one already used in this request, a database without health
    checks, as SQLite is here), where the driver already knows the connection is closed
    (Django's check then opens a new one), or when the block starts inside a transaction, the
    block changes nothing. Besides Django's documented ``execute_wrapper``, it reads and sets
    the connection's ``health_check_enabled`` and ``health_check_done``: not documented, but
    no private names, the two fields Django's own check keeps."""
    db: Any = connection  # django-stubs do not know the health check's fields
    if (
        not db.health_check_enabled
        or db.health_check_done
        or db.in_atomic_block
        or db.connection is None
        or db.connection.closed
    ):
        yield
        return
    db.health_check_done = True  # the block's first statement is the check
    first = True

    def check(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        nonlocal first
        if not first:
            return execute(sql, params, many, context)
        first = False
        in_transaction = db.in_atomic_block
        try:
            return execute(sql, params, many, context)
        except DatabaseError as exc:
            if not in_transaction or (db.connection is not None and not db.connection.closed):
                raise
            db.close()
            raise ConnectionGone(str(exc)) from exc

    try:
        with db.execute_wrapper(check):
            yield
    finally:
        if first:  # no statement was sent: the request's next one is checked as Django does
            db.health_check_done = False
