"""The sealer each process runs beside its own work: no extra process to remember.

Every process that writes events (the web server's workers, a command) hears, after each
commit, of the ledgers whose events it wrote (``outbox.events.listen``) and seals them from a
thread of its own a moment later (``DELAY``), so a burst of postings makes one block and no
request waits for a seal. A ledger whose newest entries could not be sealed yet (a transaction
older than them was still running) is tried again after ``RETRY``, as is one whose seal failed.
A command seals what it wrote before it exits. Entries that a process left unsealed when it
was killed are sealed with the ledger's next entries, by whichever process writes them, or by
``manage.py seal_journal``.

``settings.JOURNAL_SEALING``: ``"thread"`` (the default) or ``"off"`` (the tests, which seal
when they choose, and a deployment that runs ``seal_journal`` on a schedule instead)."""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
import uuid

from django.conf import settings
from django.db import close_old_connections

from journal import services
from ledgerproject import actors
from outbox import events

log = logging.getLogger("ledger.journal")

# A ledger's seal costs a handful of statements whatever it seals: gathering two seconds of a
# ledger's entries into one block keeps that cost off the postings.
DELAY = 2.0
RETRY = 2.0
BACKOFF_MAX = 60.0
FLUSH_FOR = 10.0  # at most, at a process's exit

Key = tuple[uuid.UUID, uuid.UUID]
SEALER_ACTOR = actors.Actor("system", "journal sealer")


class Sealer:
    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        """Empty, with no thread: also in a process just forked, which has no thread of its
        parent's but may have a copy of its lock taken."""
        self._due: dict[Key, float] = {}
        self._failures: dict[Key, int] = {}
        self._not_before: dict[Key, float] = {}  # a failing ledger's backoff
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None

    def wake(self, organization_id: uuid.UUID, ledger_id: uuid.UUID, delay: float = DELAY) -> None:
        at = time.monotonic() + delay
        with self._changed:
            key = (organization_id, ledger_id)
            at = max(at, self._not_before.get(key, 0.0))
            if key not in self._due or at < self._due[key]:
                self._due[key] = at
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="journal-sealer", daemon=True
                )
                self._thread.start()
            self._changed.notify()

    def _take_due(self) -> list[Key]:
        with self._changed:
            while True:
                now = time.monotonic()
                due = [key for key, at in self._due.items() if at <= now]
                if due:
                    for key in due:
                        del self._due[key]
                    return due
                nearest = min(self._due.values(), default=now + 60.0)
                self._changed.wait(timeout=nearest - now)

    def _run(self) -> None:
        with actors.working(actors.Work(actor=SEALER_ACTOR)):
            self._loop()

    def _loop(self) -> None:
        while True:
            keys = self._take_due()
            close_old_connections()
            for key in keys:
                self._seal(key)
            close_old_connections()

    def _seal(self, key: Key) -> None:
        """Seal the ledger; again after ``RETRY`` if entries wait for an older transaction, and
        after a backoff that doubles up to ``BACKOFF_MAX`` while sealing fails."""
        try:
            waiting = services.seal(*key).waiting
        except Exception:
            failures = self._failures[key] = self._failures.get(key, 0) + 1
            if failures == 1 or failures % 10 == 0:
                log.exception(
                    "Sealing the journal of ledger %s failed (%d times).", key[1], failures
                )
            backoff = min(BACKOFF_MAX, RETRY * 2 ** (failures - 1))
            self._not_before[key] = time.monotonic() + backoff
            self.wake(*key, delay=backoff)
            return
        self._failures.pop(key, None)
        self._not_before.pop(key, None)
        if waiting:
            self.wake(*key, delay=RETRY)

    def flush(self) -> None:
        """At exit: seal, in the exiting thread, what is still to seal."""
        with self._changed:
            keys, self._due = list(self._due), {}
        deadline = time.monotonic() + FLUSH_FOR
        with actors.working(actors.Work(actor=SEALER_ACTOR)):
            while keys and time.monotonic() < deadline:
                keys = [key for key in keys if _sealed_but_waiting(key)]
                if keys:
                    time.sleep(RETRY)


def _sealed_but_waiting(key: Key) -> bool:
    """Seal the ledger (at exit); answers whether it is to be tried again."""
    try:
        return services.seal(*key).waiting
    except Exception:
        log.exception("Sealing the journal of ledger %s failed at exit.", key[1])
        return True


SEALER = Sealer()


def start_listening() -> None:
    if settings.JOURNAL_SEALING == "thread":
        events.listen(SEALER.wake)
        atexit.register(SEALER.flush)
        os.register_at_fork(after_in_child=SEALER._reset)


def wake(organization_id: uuid.UUID, ledger_id: uuid.UUID) -> None:
    """Ask for a seal of the ledger soon, where this process seals (a reader that found an
    entry waiting: its writer may have been killed before it sealed)."""
    if settings.JOURNAL_SEALING == "thread":
        SEALER.wake(organization_id, ledger_id)
