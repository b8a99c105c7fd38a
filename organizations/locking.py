"""The locks that keep the organization tree and ledger lifecycles consistent under concurrency.

The tree is stored twice, as ``parent`` and as the materialised ``path`` a token's reach is
tested against, so every change of its shape (a new child, a move, a delete, an update that
saves the row) must see the shape it depends on and keep others from changing it meanwhile.
Each takes the row lock of the root of every tree it touches, in primary-key order, then
re-reads the rows it depends on: structural changes within one tree run one at a time, which is
cheap (they are rare) and cannot deadlock. A root that changed while we waited (the whole tree
was moved under another) is noticed after the lock, and the change is retried from the start.

A ledger's writes take ``FOR KEY SHARE`` on its row and check it is not deleted; deleting the
ledger (or changing its closed period) takes ``FOR UPDATE``, so a write and the delete of its
ledger never interleave. A change of the shape of the ledger's account tree (a different thing:
accounts under accounts, ``organizations.account_tree``) takes ``FOR NO KEY UPDATE``, which
waits for another such change and for the delete, not for writes. On SQLite
``select_for_update`` is a no-op; IMMEDIATE transactions serialize writers there.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from django.db import connection, transaction

from ledgerproject.db import by_database
from ledgerproject.errors import ErrorCode, LedgerError
from organizations.models import Ledger, Organization

T = TypeVar("T")
RETRIES = 5


class TreeMoved(Exception):
    """A locked root is no longer the root of a row read before the lock: start again."""


def root_id(path: str) -> uuid.UUID:
    return uuid.UUID(path.strip("/").split("/", 1)[0])


def lock_trees(organization_ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, Organization]:
    """Lock the roots of the trees holding these organizations (in id order), then answer the
    organizations as they are now. Raises ``TreeMoved`` when one of them left its tree while
    we waited."""
    wanted = sorted(set(organization_ids))
    before = dict(Organization.objects.filter(pk__in=wanted).values_list("pk", "path"))
    roots = sorted({root_id(path) for path in before.values()})
    list(Organization.objects.filter(pk__in=roots).order_by("pk").select_for_update())
    now = {o.pk: o for o in Organization.objects.filter(pk__in=wanted)}
    if any(root_id(o.path) not in roots for o in now.values()):
        raise TreeMoved
    return now


def with_tree_lock(
    organization_ids: Iterable[uuid.UUID],
    change: Callable[[dict[uuid.UUID, Organization]], T],
) -> T:
    """Run ``change(locked)`` in one database transaction holding the tree locks of these
    organizations; ``locked`` maps each id to its row as it is now (missing ids are absent)."""
    ids = [pk for pk in organization_ids if pk is not None]
    for _ in range(RETRIES):
        try:
            with transaction.atomic():
                return change(lock_trees(ids))
        except TreeMoved:
            continue
    raise LedgerError(
        ErrorCode.ACTION_NOT_PERMITTED,
        "The organization tree kept changing while this request waited; try again.",
    )


# The three strengths of a ledger's row lock. A posting takes FOR KEY SHARE, which conflicts
# only with FOR UPDATE: a change of the account tree (FOR NO KEY UPDATE) waits for another
# change of the tree and for the ledger's delete, never for a posting.
SHARED, ACCOUNT_TREE, EXCLUSIVE = "FOR KEY SHARE", "FOR NO KEY UPDATE", "FOR UPDATE"
# The organization's id comes first in every statement on a tenant table: it is the
# distribution column on Citus, which routes the statement to the one node holding the rows.
LEDGER_LOCK = "SELECT deleted_at FROM organizations_ledger WHERE organization_id = %s AND id = %s "


def ledger_key(owner: Any) -> tuple[uuid.UUID, uuid.UUID]:
    """``(organization id, ledger id)`` of a ledger, or of anything held in one (a resource, a
    transaction, a posting's guard: whatever carries ``organization_id`` and ``ledger_id``)."""
    if isinstance(owner, Ledger):
        return owner.organization_id, owner.pk
    return owner.organization_id, owner.ledger_id


def _lock_ledger_postgresql(owner: Any, strength: str) -> bool:
    """Lock the ledger row; answer whether it is active."""
    with connection.cursor() as cursor:
        cursor.execute(LEDGER_LOCK + strength, [*ledger_key(owner)])
        row = cursor.fetchone()
    return row is not None and row[0] is None


def _lock_ledger_sqlite(owner: Any, strength: str) -> bool:
    """No row locks: IMMEDIATE transactions serialize SQLite's writers."""
    organization_id, ledger_id = ledger_key(owner)
    return Ledger.objects.filter(
        organization_id=organization_id, pk=ledger_id, deleted_at__isnull=True
    ).exists()


_lock_ledger = by_database(postgresql=_lock_ledger_postgresql, sqlite=_lock_ledger_sqlite)


def ledger_deleted() -> LedgerError:
    return LedgerError(ErrorCode.ACTION_NOT_PERMITTED, "The ledger has been deleted.")


def _hold_ledger(owner: Any, strength: str) -> None:
    if not _lock_ledger(owner, strength):
        raise ledger_deleted()


def lock_ledger_active(owner: Any) -> None:
    """Inside a write into the ledger (``owner``: the ledger, or a resource held in it): hold it
    against its delete (``FOR KEY SHARE``, which concurrent writes share), or refuse with
    422 0008 when it is deleted."""
    _hold_ledger(owner, SHARED)


def lock_ledger_against_writes(ledger: Ledger) -> bool:
    """Wait for the writes into the ledger to finish and keep new ones out until COMMIT;
    answer whether it is still active."""
    return _lock_ledger(ledger, EXCLUSIVE)


@contextlib.contextmanager
def ledger_write(
    owner: Any, *, exclusive: bool = False, account_tree: bool = False
) -> Iterator[None]:
    """The one database transaction of a write into a ledger (create, update or delete of its
    contents, a commit, a revert): the ledger is held against its delete throughout, and a
    deleted ledger takes no write (422 0008). ``exclusive``: held against every other write
    into it instead (a change of its closed period). ``account_tree``: held against every
    other change of the shape of its account tree too (``organizations.account_tree``), while
    postings go on."""
    with transaction.atomic():
        _hold_ledger(owner, EXCLUSIVE if exclusive else ACCOUNT_TREE if account_tree else SHARED)
        yield
