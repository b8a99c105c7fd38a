"""What a process keeps from one request for the next, in one place: API tokens, ledgers (with
their organization's path), templates and accounts. Each kind is a ``kept.Kept`` of its own and
a wrapper around the lookup it saves: ``token_of`` around ``selectors.token_lookup``,
``read_ledger`` and ``copy_of`` around ``selectors.ledger_lookup``, and ``KeptLookups``, a
``PostingLookups`` whose hooks answer from the copies and confirm them. They live in the
domain's top app because the rule that confirms them spans every kind (the statement that
locks a posting's balances confirms the token's and ledger's epoch and the templates); the API
layer (authentication, ``ScopedAPIView``) calls it.

Copies are kept on PostgreSQL only, where triggers move the authentication epoch with every
change to a token or an organization, whatever made it; and they are used only inside
``kept.allowed``, which an API request opens on its first attempt (``ScopedAPIView``). The back
office and the commands always read from the database.

The one rule, for every kind: a copy is never trusted alone.

- A token copy serves only a view that reads the epoch again before doing anything (a view
  under a ledger: its ledger statement reads it); an epoch that moved sends the request back
  to the token's own row (``ScopedAPIView._read_again``), before anything else is done.
- A ledger copy serves only a single posting with no idempotency key (it writes nothing before
  its locking statement: ``transactions.views.PostsFromCopies``), whose token is a copy read at
  the same epoch and reaches the ledger's organization.
- A posting plans and checks with kept templates and accounts before it takes its locks; the
  statement that locks its balances reads again what would show that a copy changed: the
  epoch and whether the ledger is active and unchanged (``CONFIRM_COLUMNS``), each
  template's ``updated_at`` (``FRESH_TEMPLATES``), each account's own row.
- Nothing is written or answered from a copy that this statement, or one of its own, has not
  confirmed (``confirm_now``, before a write or an answer made without the locking statement).
- A ledger copy (with the token it was used with) or a template found changed by a posting,
  like a kept connection found closed by its first statement (``health.ConnectionGone``), is
  forgotten and raises ``kept.Stale`` before the posting's transaction commits (it rolls
  back): the request is made again, once, the ordinary way and without copies
  (``ScopedAPIView.handle_exception``, the one place anything is made again). An account
  found changed needs no second attempt: the posting is checked with the row the locking
  statement read (``run.Run.lock``).
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from django.db import DEFAULT_DB_ALIAS, connection

from ledgerproject import kept
from ledgerproject.db import ArrayParam, bind_arrays, pg_array
from ledgerproject.kept import Kept, Stale
from ledgerproject.rows import Join
from organizations import selectors
from organizations.models import EPOCH_SQL, Account, ApiToken, Balance, Ledger, Organization
from templates_dsl.models import TransactionTemplate
from transactions.lookups import (
    ACCOUNT_PART,
    BALANCE_PART,
    LOCK_ACCOUNTS_FROM,
    LOCK_ACCOUNTS_SQL,
    PostingLookups,
)

SIZE = 4096

# Tokens


class _Token(NamedTuple):
    token: ApiToken
    paths: tuple[str, ...]
    epoch: int


kept_tokens: Kept[str, _Token] = Kept(SIZE)


def token_of(
    prefix: str, *, from_copy: bool
) -> tuple[ApiToken | None, tuple[str, ...], int | None]:
    """The token with this prefix and its organizations' paths, and the epoch they were read at
    when they are this process's copy (the caller confirms it), else None. ``from_copy``: the
    view reads the epoch again before doing anything. A token read is kept."""
    entry = kept_tokens.get(prefix) if from_copy and kept.in_use() else None
    if entry is not None:
        return entry.token, entry.paths, entry.epoch
    token, paths, epoch = selectors.token_lookup(prefix)
    # The epoch's row is there (a test flush empties it) and triggers move it: keep the copy.
    if token is not None and epoch is not None and kept.in_use():
        kept_tokens.put(prefix, _Token(token, paths, epoch))
    return token, paths, None


def forget_token(prefix: str) -> None:
    kept_tokens.forget(prefix)


# Ledgers

ACTIVE_SQL = (
    "(SELECT l.deleted_at IS NULL AND l.updated_at = %s FROM organizations_ledger l "
    "WHERE l.organization_id = %s AND l.id = %s)"
)
# What confirms a ledger copy, read by the statement that locks a posting's balances or on its
# own: the epoch, and whether the ledger is active and unchanged since the copy was read (its
# closed period, above all, which a posting checks on the copy before it writes); NULL when
# it is gone. Parameters: ``confirm_params``.
CONFIRM_COLUMNS = (EPOCH_SQL, ACTIVE_SQL)
CONFIRM_SQL = f"SELECT {EPOCH_SQL}, {ACTIVE_SQL}"


class CopyChanged(Stale):
    """The epoch moved, or the ledger was changed or deleted, since the copy a posting ran on
    was read."""


@dataclass
class Check:
    """On a ledger built from a copy: the epoch it was read at, and whether a statement of the
    posting's transaction has confirmed it."""

    epoch: int
    confirmed: bool = False


@dataclass(frozen=True)
class _Ledger:
    ledger_fields: tuple[str, ...]
    ledger_values: tuple[Any, ...]
    path: str
    epoch: int


kept_ledgers: Kept[tuple[uuid.UUID, uuid.UUID], _Ledger] = Kept(SIZE)


def read_ledger(
    principal: Any, organization_id: Any, ledger_id: Any
) -> tuple[tuple[Organization, Ledger] | None, int | None]:
    """``selectors.ledger_lookup``; the ledger read is kept if it is active and the epoch is
    real."""
    found, epoch = selectors.ledger_lookup(principal, organization_id, ledger_id)
    if found is not None and epoch is not None and kept.in_use():
        organization, ledger = found
        if ledger.deleted_at is None:
            names = tuple(
                f.attname for f in Ledger._meta.concrete_fields if f.attname in ledger.__dict__
            )
            values = tuple(ledger.__dict__[name] for name in names)
            entry = _Ledger(names, values, organization.path, epoch)
            kept_ledgers.put((ledger.organization_id, ledger.pk), entry)
    return found, epoch


def copy_of(
    principal: Any, organization_id: Any, ledger_id: Any
) -> tuple[Organization, Ledger] | None:
    """The kept organization and ledger of a path, as new instances carrying a ``Check``, when
    the token is a copy read at the same epoch and reaches the organization."""
    epoch = principal.unconfirmed_epoch
    if epoch is None or not kept.in_use():
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
    ledger = Ledger.from_db(DEFAULT_DB_ALIAS, entry.ledger_fields, entry.ledger_values)
    organization = Organization.from_db(DEFAULT_DB_ALIAS, ("id", "path"), (key[0], entry.path))
    ledger.organization = organization
    ledger.copy_check = Check(epoch)  # type: ignore[attr-defined]
    return organization, ledger


@functools.lru_cache(maxsize=SIZE)
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
    return [ledger.updated_at, ledger.organization_id, ledger.pk]


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


def confirm_now(ledger: Ledger) -> None:
    """Confirm a copy no statement has confirmed yet, with a statement of its own (before a
    write, or before an answer that wrote nothing)."""
    if not unconfirmed(ledger):
        return
    with connection.cursor() as cursor:
        cursor.execute(CONFIRM_SQL, confirm_params(ledger))
        epoch, active = cursor.fetchone()
    confirm(ledger, epoch, active)


# Templates and accounts

# How many of the kept templates the postings planned with are still as they were (same row,
# same updated_at, not deleted). Each id is compared with its own stamp by its position (the
# ids are distinct), which PostgreSQL plans much faster than a join with unnest(). The ids it
# reads by are an ``ArrayParam``, so for a posting's one or few templates the statement keeps
# its generic plan. In parentheses: a statement of its own, and a value in the statement that
# locks the balances.
FRESH_TEMPLATES = (
    "(SELECT count(*) FROM templates_dsl_transactiontemplate t "
    "WHERE t.organization_id = %s AND t.id = ANY(%s) AND t.deleted_at IS NULL "
    "AND t.updated_at = (%s::timestamptz[])[array_position(%s::uuid[], t.id)])"
)
# The statement that locks a posting's balances with the values that confirm its copies, each
# when needed: the ledger copy's (``CONFIRM_COLUMNS``), then whether the templates are unchanged.
CONFIRMING_LOCK_SQL = {
    (templates, copy): Join(
        [ACCOUNT_PART, BALANCE_PART],
        LOCK_ACCOUNTS_FROM,
        extra=[*(CONFIRM_COLUMNS if copy else ()), *([FRESH_TEMPLATES] * templates)],
    )
    for templates, copy in ((False, True), (True, False), (True, True))
}
CONFIRMING_LOCK_SQL[False, False] = LOCK_ACCOUNTS_SQL
# The templates and accounts postings read, as they read them (``lookups.POSTING_ACCOUNT_FIELDS``).
kept_templates: Kept[tuple[uuid.UUID, str], TransactionTemplate] = Kept(SIZE)
kept_accounts: Kept[tuple[uuid.UUID, str], Account] = Kept(65536)


class TemplatesChanged(Stale):
    """A kept template changed since it was read."""


def lookups_for(ledger: Ledger) -> PostingLookups:
    """The lookups a posting runs on: ``KeptLookups`` where copies are used here."""
    return KeptLookups(ledger) if kept.in_use() else PostingLookups(ledger)


def on_copy(ledger: Ledger) -> bool:
    """Whether this ledger is the process's copy (``copy_of``)."""
    return check_of(ledger) is not None


class KeptLookups(PostingLookups):
    """``PostingLookups`` on the process's copies, through its hooks: templates and accounts
    answered from them, and confirmed by the statement that locks the balances, with the ledger
    copy."""

    def __init__(self, ledger: Ledger) -> None:
        super().__init__(ledger)
        self.unverified: dict[uuid.UUID, Any] = {}  # kept templates used: id -> updated_at

    def read_templates(self, codes: set[str]) -> None:
        for code in list(codes):
            template = kept_templates.get((self.ledger.pk, code))
            if template is not None:
                self.templates[code] = template
                self.unverified[template.pk] = template.updated_at
                codes.discard(code)
        if codes:
            super().read_templates(codes)
            for code in codes:
                if (template := self.templates[code]) is not None:
                    kept_templates.put((self.ledger.pk, code), template)

    def accounts_from_copies(self, aliases: Iterable[str]) -> bool:
        """Take the accounts with these aliases from the copies when every one is there: the
        posting is then checked and prepared before its locks, and the locking statement reads
        them again. False, and nothing taken, when one is missing."""
        wanted = set(aliases)
        found = {alias: kept_accounts.get((self.ledger.pk, alias)) for alias in wanted}
        if any(account is None for account in found.values()):
            return False
        self.accounts.update(found)
        return True

    def lock_accounts(
        self, locked: Iterable[str], read: Iterable[str] = ()
    ) -> tuple[dict[uuid.UUID, Balance], bool]:
        """As ``PostingLookups.lock_accounts``; the accounts read are kept (an alias with no
        account is forgotten)."""
        locked, read = set(locked), set(read)
        found = super().lock_accounts(locked, read)
        for alias in locked | read:
            account = self.accounts[alias]
            if account is None:
                kept_accounts.forget((self.ledger.pk, alias))
            else:
                kept_accounts.put((self.ledger.pk, alias), account)
        return found

    def locking_statement(self) -> tuple[Join, list[Any]]:
        copy, templates = on_copy(self.ledger), bool(self.unverified)
        params = [
            *(confirm_params(self.ledger) if copy else ()),
            *(self._fresh_params() if templates else ()),
        ]
        return CONFIRMING_LOCK_SQL[templates, copy], params

    def confirm_copies(self, extra: tuple[Any, ...] | None) -> None:
        if on_copy(self.ledger) and extra is not None:  # (with no row: confirm_before_write)
            confirm(self.ledger, *extra[:2])
        if self.unverified:
            self._verify(extra[-1] if extra is not None else None)

    def verify_templates(self) -> None:
        if self.unverified:
            self._verify(None)

    def confirm_before_write(self) -> None:
        confirm_now(self.ledger)

    def _fresh_params(self) -> list[Any]:
        ids = list(self.unverified)
        stamps = pg_array(self.unverified.values())
        return [self.organization_id, ArrayParam(ids, "uuid"), stamps, pg_array(ids)]

    def _verify(self, fresh: int | None) -> None:
        """Every kept template used is unchanged, or ``TemplatesChanged`` (their entries are
        dropped, so the request made again reads them from the database)."""
        if fresh is None:
            with connection.cursor() as cursor:
                cursor.execute(*bind_arrays(FRESH_TEMPLATES, self._fresh_params()))
                fresh = cursor.fetchone()[0]
        if fresh != len(self.unverified):
            kept_templates.forget_values(lambda template: template.pk in self.unverified)
            raise TemplatesChanged
        self.unverified.clear()
