"""What a process keeps from one request for the next: API tokens
(``ledgerproject.api.authentication``), ledgers (``organizations.ledger_copies``), templates and
accounts (``transactions.lookups``), each kind in a ``Kept`` of its own, on PostgreSQL.

One rule holds for every kind: a copy is never trusted alone. A posting may plan and check with
copies before it takes its locks; the statement that locks its balances reads again what would
show that a copy changed (the authentication epoch for tokens and ledgers, each template's
``updated_at``, each account's own row), and nothing is written or answered from a copy that
statement, or one of its own, has not confirmed. A copy found changed is forgotten, and the
work made from it is made again from the database: for a template, the whole posting
(``transactions.engine``); for an account, the posting's checks, with the account the locking
statement read (``transactions.run.Run.lock``); for a token or a ledger, the whole request
(``ScopedAPIView``), which must be authenticated and its ledger read again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from typing import Generic, TypeVar

from django.db import connection

K = TypeVar("K", bound=Hashable)


def in_use() -> bool:
    """Copies are kept only on PostgreSQL, where triggers move the authentication epoch with
    every change to a token or an organization, whatever made it."""
    return connection.vendor == "postgresql"


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
