"""Row locks, always taken in one order (by primary key) so that concurrent postings never
deadlock. On SQLite ``select_for_update`` is a no-op: IMMEDIATE transactions serialize writers."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterable

from django.db import connection

from ledgerproject.db import ArrayParam, cursor
from ledgerproject.errors import ErrorCode, LedgerError
from ledgerproject.rows import Select
from organizations.models import Balance, Ledger
from transactions.models import Transaction

LOCK_BALANCES = Select(
    Balance,
    "b",
    "FROM organizations_balance b WHERE b.organization_id = %s AND b.account_id = ANY(%s) "
    "ORDER BY b.id FOR UPDATE",
)


def lock_balances(
    organization_id: uuid.UUID, account_ids: Iterable[uuid.UUID]
) -> dict[uuid.UUID, Balance]:
    """Lock the balances of these accounts of one organization, in balance-id order; keyed by
    account id. (On PostgreSQL one literal statement, which skips the ORM's query
    compilation.)"""
    wanted = sorted(set(account_ids))
    if connection.vendor == "postgresql":
        rows: Iterable[Balance] = LOCK_BALANCES.fetch([organization_id, ArrayParam(wanted, "uuid")])
    else:
        rows = (
            Balance.objects.filter(organization_id=organization_id, account_id__in=wanted)
            .order_by("pk")
            .select_for_update(of=("self",))
        )
    return {row.account_id: row for row in rows}


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


def _key_lock_id(ledger_id: uuid.UUID, key: str) -> int:
    digest = hashlib.sha256(f"{ledger_id}:{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def try_lock_keys(*, ledger_id: uuid.UUID, keys: Iterable[str]) -> set[str]:
    """Take many idempotency keys in one statement; answer the ones another request holds."""
    wanted = sorted(set(keys))
    if connection.vendor != "postgresql" or not wanted:
        return set()
    with cursor() as shared:
        shared.execute(
            "SELECT pg_try_advisory_xact_lock(k) FROM unnest(%s::bigint[]) WITH ORDINALITY "
            "AS t(k, n) ORDER BY n",
            [[_key_lock_id(ledger_id, key) for key in wanted]],
        )
        taken = [row[0] for row in shared.fetchall()]
    return {key for key, ok in zip(wanted, taken, strict=True) if not ok}
