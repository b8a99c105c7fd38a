"""Rolled-up balances effective at a past time (docs/ACCOUNT-TREES.md): as
``organizations.rollups`` reads them now, but from the operations. Each account counts its
balance after the last operation written by then, plus the operations written since that were
backdated to it (every operation takes effect no later than it is written, docs/TIME.md)."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterable, Iterator

from ledgerproject.db import one_snapshot
from organizations.models import Ledger
from organizations.rollups import Part, Totals, db_id, db_time, rolled_up_now, totals_of, tree_rows
from transactions.money import change_of

# Parameters: the organization (twice), ``at``.
LAST_WRITTEN = """SELECT tree.root, o.asset_code, o.balance_scale_after,
    o.balance_available_after, o.balance_on_hold_after
FROM tree JOIN transactions_operation o
  ON o.organization_id = %s AND o.account_id = tree.id
 AND o.balance_version = (
    SELECT max(last.balance_version) FROM transactions_operation last
    WHERE last.organization_id = %s AND last.account_id = tree.id AND last.created_at <= %s)"""
# Parameters: the organization, ``at`` (twice). An operation's amount is at its own scale; the
# balance it left may be at a larger one, which the account's total then takes (as
# ``selectors.balance_at`` does).
BACKDATED = """SELECT tree.root, o.asset_code, o.scale, o.type, o.effect, o.amount,
    o.balance_scale_after
FROM tree JOIN transactions_operation o
  ON o.organization_id = %s AND o.account_id = tree.id
 AND o.created_at > %s AND o.effective_at <= %s"""


def _parts(ledger: Ledger, roots: list[uuid.UUID], at: dt.datetime) -> Iterator[Part]:
    organization, when = db_id(ledger.organization_id), db_time(at)
    yield from tree_rows(ledger, roots, LAST_WRITTEN, [organization, organization, when])
    backdated = tree_rows(ledger, roots, BACKDATED, [organization, when, when])
    for root, asset, scale, direction, effect, amount, scale_after in backdated:
        yield (root, asset, scale, *change_of(direction, effect, int(amount)))
        yield (root, asset, scale_after, 0, 0)


def rolled_up(
    ledger: Ledger, account_ids: Iterable[uuid.UUID], *, at: dt.datetime, now: dt.datetime
) -> Totals:
    """Each account's balance plus all its descendants', per asset, effective at ``at`` as the
    ledger knows it now (``now`` or later: from the balances)."""
    roots = list(dict.fromkeys(account_ids))
    if at >= now:
        return rolled_up_now(ledger, roots)
    if not roots:
        return {}
    with one_snapshot():
        return totals_of(roots, list(_parts(ledger, roots, at)))
