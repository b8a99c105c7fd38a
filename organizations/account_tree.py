"""The account tree: an account may name a parent account of its ledger, making a chart of
accounts whose rolled-up balances ``organizations.rollups`` reads now and
``transactions.rollups`` at a past time (docs/ACCOUNT-TREES.md).

Its rules live here, and only here: a parent is an active account of the same ledger, not an
external one; no account is its own ancestor; no branch is deeper than ``MAX_DEPTH``. Every
change of the tree's shape (a new child, a move, the delete of an account) checks them on the
ledger's row lock for changes of its account tree (``ledger_write(..., account_tree=True)``),
so two changes of one ledger's tree run one after the other and each sees the tree the other
left: two moves racing cannot make a cycle, and no child is added under an account being
deleted. An update that is not a move changes the account's row as it is under its own lock
(``contents.account_update``), never its parent. Postings do not take the tree lock and are
not held up by it."""

from __future__ import annotations

import uuid
from typing import Any

from ledgerproject.errors import ErrorCode, LedgerError
from organizations.models import Account

# Levels from a root (depth 1) down: deeper than any chart of accounts needs.
MAX_DEPTH = 10
# How far a walk of the tree goes whatever the rows hold: far deeper than the rules allow, so
# that a tree made before them reads exactly, and finite if the rows were ever made a cycle.
WALK_LIMIT = 100


def _refuse(description: str, reason: str) -> LedgerError:
    return LedgerError(
        ErrorCode.ACTION_NOT_PERMITTED, description, fields={"parentAccountId": reason}
    )


def _tree(account: Account) -> Any:
    return Account.objects.filter(
        organization_id=account.organization_id, ledger_id=account.ledger_id
    )


def ancestors(account: Account, start: uuid.UUID, limit: int = MAX_DEPTH) -> list[uuid.UUID]:
    """``start`` and the accounts above it, up to its root or ``limit`` levels above it: one
    query per level."""
    chain, current = [start], start
    while len(chain) <= limit:
        above = _tree(account).filter(pk=current).values_list("parent_account_id", flat=True)
        current = above.first()
        if current is None:
            break
        chain.append(current)
    return chain


def _height(account: Account) -> int:
    """Levels of the subtree under ``account``, itself included (a leaf is 1): one query per
    level."""
    height, level = 1, [account.pk]
    while height <= MAX_DEPTH:
        level = list(
            _tree(account).filter(parent_account_id__in=level).values_list("pk", flat=True)
        )
        if not level:
            break
        height += 1
    return height


def parent_for(account: Account, parent_id: uuid.UUID | None, *, moving: bool) -> Account | None:
    """The parent ``account`` may take (new, or ``moving`` with its subtree), checked against
    the tree as it is: inside ``ledger_write(..., account_tree=True)``. 422 0008 with
    ``parentAccountId`` otherwise."""
    if parent_id is None:
        return None
    parent = _tree(account).filter(pk=parent_id, deleted_at__isnull=True).first()
    if parent is None or parent.is_external:
        raise _refuse(
            "parentAccountId must name an active account of this ledger, not an external one.",
            "not an active account of this ledger",
        )
    above = ancestors(account, parent.pk)
    if account.pk in above:
        raise _refuse("An account cannot become a descendant of itself.", "would make a cycle")
    height = _height(account) if moving else 1  # a new account has no children yet
    if len(above) + height > MAX_DEPTH:
        raise _refuse(
            f"The account tree would be deeper than {MAX_DEPTH} levels.",
            f"deeper than {MAX_DEPTH} levels",
        )
    return parent


def check_no_children(account: Account) -> None:
    """An account with active children is not deleted: they would hang from nothing."""
    if _tree(account).filter(parent_account_id=account.pk, deleted_at__isnull=True).exists():
        raise LedgerError(
            ErrorCode.ACTION_NOT_PERMITTED,
            "The account has active child accounts; move or delete them first.",
        )


def tree_problems(organization_id: uuid.UUID, ledger_id: uuid.UUID) -> list[str]:
    """What in the ledger's account tree breaks the rules above (``check_ledger``): trees made
    before the rules existed may hold an external parent or a branch too deep, and the
    database, not only this module, can be written to."""
    rows = {
        row["pk"]: row
        for row in Account.objects.filter(
            organization_id=organization_id, ledger_id=ledger_id
        ).values("pk", "alias", "parent_account_id", "type", "deleted_at")
    }
    problems = []
    for row in rows.values():
        if row["parent_account_id"] is None:
            continue
        parent = rows.get(row["parent_account_id"])
        name = f"account {row['alias']} ({row['pk']})"
        if parent is None:
            problems.append(f"{name}: its parent is not an account of this ledger")
            continue
        if parent["type"] == Account.EXTERNAL:
            problems.append(f"{name}: its parent is an external account")
        if parent["type"] == Account.CONVERSION:
            problems.append(f"{name}: its parent is a conversion account")
        if parent["deleted_at"] is not None and row["deleted_at"] is None:
            problems.append(f"{name}: its parent {parent['alias']} is deleted")
        depth = 1
        above: uuid.UUID | None = row["parent_account_id"]
        while above is not None and depth <= WALK_LIMIT:
            depth += 1
            above = rows[above]["parent_account_id"] if above in rows else None
        if depth > WALK_LIMIT:
            problems.append(f"{name}: no root within {WALK_LIMIT} levels above it (a cycle)")
        elif depth > MAX_DEPTH:
            problems.append(f"{name}: {depth} levels deep, more than {MAX_DEPTH}")
    return problems
