"""Ledgers kept per process, for single postings without an idempotency key (PostgreSQL).

Every request under a ledger reads the ledger, its organization's path and the authentication
epoch in one statement (``selectors.ledger_lookup``). A posting need not wait for it: the
process keeps what that statement read, and a single posting with no idempotency key (it writes
nothing before its locking statement; ``transactions.views.PostsFromCopies``) whose token is
also this process's copy (``authentication.BearerTokenAuthentication``) runs on the kept ledger.
The copy is confirmed inside the posting's database transaction, before anything is written,
by the statement that locks its balances: it reads the epoch and whether the ledger is still
active (``CONFIRM_COLUMNS``), and a difference raises ``CopyChanged``, which rolls the
transaction back.

The rules that keep this exactly as safe as reading the ledger first:

- a copy is used only with a token copy read at the same epoch, for a ledger that was active
  and that the token reaches (``TokenPrincipal.reaches``). Every change to a token, its
  organizations or any organization moves the epoch (by trigger), so an unchanged epoch means
  the token and the organization's path are as they were;
- nothing is written from an unconfirmed copy: the engine confirms it (``confirm_now``) before
  its write when no locking statement did;
- nothing is answered from an unconfirmed copy: a refusal or a dry run, made before any locking
  statement, is confirmed by a statement of its own first; if the copy changed (or a locking
  statement found it changed), the request goes through the ordinary path again, the token and
  the ledger read first (``ScopedAPIView``), so the client sees exactly what it would have
  seen.
"""

from __future__ import annotations

import functools
import uuid
from dataclasses import dataclass
from typing import Any

from django.db import connection

from ledgerproject import kept, rows
from ledgerproject.kept import Kept
from organizations.models import EPOCH_SQL, Ledger, Organization

CACHE_SIZE = 4096
ACTIVE_SQL = (
    "(SELECT l.deleted_at IS NULL FROM organizations_ledger l "
    "WHERE l.organization_id = %s AND l.id = %s)"
)
# What confirms a copy, read by the statement that locks a posting's balances or on its own:
# the epoch, and whether the ledger is active (NULL when it is gone). Parameters:
# ``confirm_params``.
CONFIRM_COLUMNS = (EPOCH_SQL, ACTIVE_SQL)
CONFIRM_SQL = f"SELECT {EPOCH_SQL}, {ACTIVE_SQL}"


class CopyChanged(Exception):
    """The epoch moved, or the ledger was deleted, since the copy a posting ran on was read:
    the posting's transaction is rolled back and the request goes through the ordinary path."""


@dataclass
class Check:
    """On a ledger built from a copy: the epoch it was read at, and whether a statement of the
    posting's transaction has confirmed it."""

    epoch: int
    confirmed: bool = False


@dataclass(frozen=True)
class _Entry:
    ledger_fields: tuple[str, ...]
    ledger_values: tuple[Any, ...]
    path: str
    epoch: int


kept_ledgers: Kept[tuple[uuid.UUID, uuid.UUID], _Entry] = Kept(CACHE_SIZE)


def keep(organization: Organization, ledger: Ledger, epoch: int | None) -> None:
    """Keep what the ledger statement read, if the ledger is active and the epoch is real
    (PostgreSQL, with its triggers)."""
    if epoch is None or ledger.deleted_at is not None or not kept.in_use():
        return
    fields = tuple(f.attname for f in Ledger._meta.concrete_fields if f.attname in ledger.__dict__)
    values = tuple(ledger.__dict__[name] for name in fields)
    entry = _Entry(fields, values, organization.path, epoch)
    key = (ledger.organization_id, ledger.pk)
    kept_ledgers.put(key, entry)


def copy_of(
    principal: Any, organization_id: Any, ledger_id: Any
) -> tuple[Organization, Ledger] | None:
    """The kept organization and ledger of a path, as new instances carrying a ``Check``, when
    the token is a copy read at the same epoch and reaches the organization."""
    epoch = principal.unconfirmed_epoch
    if epoch is None:
        return None
    organization_text, ledger_text = str(organization_id), str(ledger_id)
    if len(organization_text) > 64 or len(ledger_text) > 64:
        return None  # not kept: an id in an unusual form is read the ordinary way
    key = _path_ids(organization_text, ledger_text)
    if key is None:
        return None
    entry = kept_ledgers.get(key)
    if entry is None or entry.epoch != epoch or not principal.reaches(entry.path):
        return None
    ledger = rows.loaded(Ledger, entry.ledger_fields, entry.ledger_values)
    organization = rows.loaded(Organization, ("id", "path"), (key[0], entry.path))
    ledger.organization = organization
    ledger.copy_check = Check(epoch)  # type: ignore[attr-defined]
    return organization, ledger


@functools.lru_cache(maxsize=CACHE_SIZE)
def _path_ids(organization_id: str, ledger_id: str) -> tuple[uuid.UUID, uuid.UUID] | None:
    """The path's two ids as UUIDs, or None when one is not a UUID; kept for the paths seen
    last (the same ledger is posted to again and again)."""
    try:
        return uuid.UUID(organization_id), uuid.UUID(ledger_id)
    except ValueError:
        return None


def check_of(ledger: Any) -> Check | None:
    return getattr(ledger, "copy_check", None)


def unconfirmed(ledger: Any) -> bool:
    check = check_of(ledger)
    return check is not None and not check.confirmed


def confirm_params(ledger: Ledger) -> list[Any]:
    """The parameters of ``CONFIRM_COLUMNS``."""
    return [ledger.organization_id, ledger.pk]


def confirm(ledger: Ledger, epoch: Any, active: Any) -> None:
    """The copy is confirmed by what a statement of the posting's transaction read, or
    ``CopyChanged`` (the copy is dropped)."""
    check = check_of(ledger)
    assert check is not None
    if epoch != check.epoch or active is not True:
        kept_ledgers.forget((ledger.organization_id, ledger.pk))
        check.confirmed = False
        raise CopyChanged
    check.confirmed = True


def unconfirm(ledger: Ledger) -> None:
    """A confirmation read by a transaction that rolled back counts for nothing."""
    check = check_of(ledger)
    if check is not None:
        check.confirmed = False


def confirm_now(ledger: Ledger) -> None:
    """Confirm a copy no statement has confirmed yet, with a statement of its own (before a
    write, or before an answer that wrote nothing)."""
    if not unconfirmed(ledger):
        return
    with connection.cursor() as cursor:
        cursor.execute(CONFIRM_SQL, confirm_params(ledger))
        epoch, active = cursor.fetchone()
    confirm(ledger, epoch, active)
