"""Rolled-up balances of the account tree (docs/ACCOUNT-TREES.md): an account's own balance
plus those of every account under it, per asset, exactly. This module reads them now, from the
balances; ``transactions.rollups`` effective at a past time, from the operations.

Each read walks the tree in the database (a recursive query from the accounts asked about,
down ``parent_account_id``) joined to the rows to add: once now, twice at a past time. The
rows are added up here, in Python integers, at each asset's largest scale: the same code on
PostgreSQL and on SQLite, exact whatever the size of the sums. A page of a list is one walk
from all its accounts."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterable, Iterator
from typing import Any

from django.db import connection, models

from ledgerproject.amounts import rescale
from ledgerproject.db import one_snapshot
from organizations.account_tree import WALK_LIMIT
from organizations.models import Ledger

# The accounts under each of the roots asked about, the roots included, with the root they
# were reached from. The organization's id is in every join: the distribution column on Citus,
# which keeps the whole walk on the node holding the organization. It stops at ``WALK_LIMIT``
# levels (``check_ledger`` names a branch deeper than the rules allow, or a cycle).
TREE = """WITH RECURSIVE tree (root, id, depth) AS (
    SELECT a.id, a.id, 1 FROM organizations_account a
    WHERE a.organization_id = %s AND a.ledger_id = %s AND a.id IN ({roots})
    UNION ALL
    SELECT tree.root, a.id, tree.depth + 1 FROM tree
    JOIN organizations_account a
      ON a.organization_id = %s AND a.ledger_id = %s AND a.parent_account_id = tree.id
    WHERE tree.depth < {limit}
)
"""
# Parameters: the organization.
NOW = """SELECT tree.root, b.asset_code, b.scale, b.available, b.on_hold
FROM tree JOIN organizations_balance b ON b.organization_id = %s AND b.account_id = tree.id"""

# {account id: {asset: {"available", "onHold", "scale"}}}
Totals = dict[uuid.UUID, dict[str, dict[str, int]]]
# (root, asset, scale, available, on hold): one account's part of a root's total
Part = tuple[Any, str, int, Any, Any]


def db_id(value: Any) -> Any:
    """An id as the database takes it in a statement (text on SQLite)."""
    return models.UUIDField().get_db_prep_value(value, connection)


def db_time(value: dt.datetime) -> Any:
    return models.DateTimeField().get_db_prep_value(value, connection)


def tree_rows(
    ledger: Ledger, roots: list[uuid.UUID], select: str, params: list[Any]
) -> Iterator[tuple[Any, ...]]:
    """The rows of ``select`` (which reads ``tree``, with ``params``) over the subtrees of
    ``roots``, accounts of ``ledger``."""
    tree = TREE.format(roots=", ".join(["%s"] * len(roots)), limit=WALK_LIMIT)
    organization, ledger_id = db_id(ledger.organization_id), db_id(ledger.pk)
    walk = [organization, ledger_id, *map(db_id, roots), organization, ledger_id]
    with connection.cursor() as cursor:
        cursor.execute(tree + select, [*walk, *params])
        yield from cursor


def totals_of(roots: list[uuid.UUID], parts: Iterable[Part]) -> Totals:
    """Each root's parts added up per asset, at the asset's largest scale among them."""
    grouped: dict[tuple[uuid.UUID, str], list[tuple[int, int, int]]] = {}
    for root, asset, scale, available, on_hold in parts:
        key = (uuid.UUID(str(root)), asset)
        grouped.setdefault(key, []).append((int(scale), int(available), int(on_hold)))
    totals: Totals = {pk: {} for pk in roots}
    for (root, asset), items in sorted(grouped.items(), key=lambda item: item[0][1]):
        top = max(scale for scale, _, _ in items)
        totals[root][asset] = {
            "available": sum(rescale(value, scale, top) for scale, value, _ in items),
            "onHold": sum(rescale(value, scale, top) for scale, _, value in items),
            "scale": top,
        }
    return totals


def rolled_up_now(ledger: Ledger, account_ids: Iterable[uuid.UUID]) -> Totals:
    """Each account's balance plus all its descendants', per asset, now. An id that is not an
    account of the ledger answers nothing (an empty mapping)."""
    roots = list(dict.fromkeys(account_ids))
    if not roots:
        return {}
    with one_snapshot():
        rows = tree_rows(ledger, roots, NOW, [db_id(ledger.organization_id)])
        return totals_of(roots, list(rows))


def as_list(totals: dict[str, dict[str, int]]) -> list[dict[str, Any]]:
    """A root's totals as the API writes them: one entry per asset, by asset code."""
    return [{"assetCode": asset, **values} for asset, values in totals.items()]
