"""Concurrency tests run on PostgreSQL with real threads and real connections."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection

from tests.transactions.conftest import Book, book  # noqa: F401 - the fixture, re-exported


def run_threads(count: int, work: Callable[[int, threading.Barrier], Any]) -> list[Any]:
    """Run ``work(i, barrier)`` in ``count`` threads, each with its own database connection;
    the barrier lets them start the racy part together. Returns results in thread order."""
    barrier = threading.Barrier(count)
    results: list[Any] = [None] * count
    errors: list[BaseException] = []

    def body(index: int) -> None:
        try:
            results[index] = work(index, barrier)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the main thread
            errors.append(exc)
            barrier.abort()
        finally:
            connection.close()

    threads = [threading.Thread(target=body, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    if errors:
        raise errors[0]
    assert not any(t.is_alive() for t in threads), "a thread did not finish"
    return results


__all__ = ["Book", "run_threads"]


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    """Every test in this folder is a PostgreSQL race: mark it so that ``make stress``
    (``-m "slow or postgres"``) runs it. (A ``pytestmark`` here would not apply to them.)"""
    here = __file__.rsplit("/", 1)[0]
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(pytest.mark.postgres)
