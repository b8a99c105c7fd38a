"""The means of keeping copies from one request for the next: ``Kept``, a bounded map shared by
the process's threads; ``allowed``, the block inside which copies may be used; and ``Stale``,
what a request raises when one it ran on was found changed. What is kept, and the rule that
makes a copy safe to use, are ``transactions.copies``'s."""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextvars import ContextVar
from typing import Generic, TypeVar

from ledgerproject.db import by_database

K = TypeVar("K", bound=Hashable)


class Stale(Exception):
    """What a request ran on, kept from an earlier one (a token, a ledger, a template, a
    connection), was found changed or closed before anything was written: the request is made
    again without copies."""


def _kept_postgresql() -> bool:
    """Copies are kept only on PostgreSQL, where triggers move the authentication epoch with
    every change to a token or an organization, whatever made it."""
    return True


def _kept_sqlite() -> bool:
    return False


_kept_here = by_database(postgresql=_kept_postgresql, sqlite=_kept_sqlite)
_allowed: ContextVar[bool] = ContextVar("copies_allowed", default=False)


@contextlib.contextmanager
def allowed(yes: bool = True) -> Iterator[None]:
    """Copies may be used inside this block (or, ``allowed(yes=False)``, may not). Only a caller
    that makes its work again on ``Stale`` opens one: an API request (``ScopedAPIView``), on its
    first attempt. The back office and the commands read from the database."""
    token = _allowed.set(yes)
    try:
        yield
    finally:
        _allowed.reset(token)


def in_use() -> bool:
    """Whether copies are kept and used here: on PostgreSQL, inside ``allowed``."""
    return _allowed.get() and _kept_here()


V = TypeVar("V")


class Kept(Generic[K, V]):
    """Up to ``size`` values by key, shared by the process's threads; the least recently kept
    goes first when it is full. Reads take no lock: a read of a dict is atomic in CPython, and
    a value read just before another thread replaced it is confirmed like any copy."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._values: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        return self._values.get(key)

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._values[key] = value
            self._values.move_to_end(key)
            while len(self._values) > self.size:
                self._values.popitem(last=False)

    def forget(self, key: K) -> None:
        with self._lock:
            self._values.pop(key, None)

    def forget_values(self, unwanted: Callable[[V], bool]) -> None:
        with self._lock:
            for key in [k for k, value in self._values.items() if unwanted(value)]:
                del self._values[key]

    def __iter__(self) -> Iterator[K]:
        return iter(list(self._values))  # a snapshot: other threads may change it meanwhile

    def items(self) -> list[tuple[K, V]]:
        return list(self._values.items())

    def clear(self) -> None:
        with self._lock:
            self._values.clear()

    def __len__(self) -> int:
        return len(self._values)
