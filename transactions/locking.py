"""Row locks, always taken in one order (by primary key) so that concurrent postings never
deadlock. SQLite has none: IMMEDIATE transactions serialize its writers."""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from ledgerproject.db import ArrayParam, by_database
from ledgerproject.errors import ErrorCode, LedgerError
from ledgerproject.rows import Select
from organizations.models import Balance, Ledger
from transactions.models import Transaction

# The end of a statement that locks balances in balance-id order on PostgreSQL, after a subquery
# ``ordered`` that answers a ``balance_id`` per row, sorted by it (its ORDER BY also keeps the
# planner from merging it into the rest). What orders the locks is that each balance is read and
# locked on its own, by its primary key, in a LATERAL subquery: PostgreSQL runs it once per row
# of the sorted subquery, in that order, as a nested loop (a LATERAL reference leaves it no
# other plan). A FOR UPDATE on the whole statement would be taken inside that subquery just the
# same, so the last ORDER BY only sorts rows already locked. Its one parameter: the organization.
EACH_BALANCE_LOCKED = (
    "CROSS JOIN LATERAL (SELECT * FROM organizations_balance locked "
    "WHERE locked.organization_id = %s AND locked.id = ordered.balance_id "
    "OFFSET 0 FOR UPDATE) b ORDER BY b.id"
)
# PostgreSQL: each balance's id found by its account, then the balances locked by their ids in
# id order (``EACH_BALANCE_LOCKED``). Every lookup is an equality on the whole of a unique key,
# which PostgreSQL plans the same with statistics or without (``lookups.LOCK_ACCOUNTS_FROM``).
LOCK_BALANCES_FROM = (
    "FROM (SELECT (SELECT found.id FROM organizations_balance found "
    "WHERE found.organization_id = %s AND found.account_id = wanted.id) AS balance_id "
    f"FROM unnest(%s) AS wanted(id) ORDER BY balance_id) ordered {EACH_BALANCE_LOCKED}"
)
LOCK_BALANCES = Select(Balance, "b", LOCK_BALANCES_FROM)
# SQLite has no row locks: IMMEDIATE transactions serialize its writers.
READ_BALANCES = Select(
    Balance,
    "b",
    "FROM organizations_balance b WHERE b.organization_id = %s AND b.account_id = ANY(%s) "
    "ORDER BY b.id",
)


def _lock_balances_postgresql(
    organization_id: uuid.UUID, account_ids: Iterable[uuid.UUID]
) -> dict[uuid.UUID, Balance]:
    """Lock the balances of these accounts of one organization, in balance-id order; keyed by
    account id."""
    wanted = ArrayParam(sorted(set(account_ids)), "uuid")
    rows = LOCK_BALANCES.fetch([organization_id, wanted, organization_id])
    return {row.account_id: row for row in rows}


def _read_balances_sqlite(
    organization_id: uuid.UUID, account_ids: Iterable[uuid.UUID]
) -> dict[uuid.UUID, Balance]:
    wanted = ArrayParam(sorted(set(account_ids)), "uuid")
    return {row.account_id: row for row in READ_BALANCES.fetch([organization_id, wanted])}


lock_balances = by_database(postgresql=_lock_balances_postgresql, sqlite=_read_balances_sqlite)


def lock_transaction(*, ledger: Ledger, transaction_id: uuid.UUID) -> Transaction:
    """Lock a transaction for commit, revert, cancel or expiry: those exclude each other, and
    each waits for the one before it, so whichever takes the row first decides. The lock is
    ``FOR NO KEY UPDATE``, so a posting naming this transaction as its parent (whose foreign
    key check takes ``FOR KEY SHARE`` at COMMIT, after its balance locks) never waits on it,
    and the two cannot deadlock."""
    row = (
        Transaction.objects.filter(
            organization_id=ledger.organization_id, pk=transaction_id, ledger_id=ledger.pk
        )
        .select_for_update(no_key=True, of=("self",))
        .first()
    )
    if row is None:
        raise LedgerError(ErrorCode.NOT_FOUND, "The transaction was not found.")
    return row
