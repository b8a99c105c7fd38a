"""Row locks, always taken in one order (by primary key) so that concurrent postings never
deadlock. On SQLite ``select_for_update`` is a no-op: IMMEDIATE transactions serialize writers."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterable

from django.db import connection

from ledgerproject.api.errors import ApiError, ErrorCode
from transactions.models import Balance, Transaction


def lock_balances(account_ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, Balance]:
    """Lock the balances of these accounts, in balance-id order; keyed by account id."""
    rows = (
        Balance.objects.filter(account_id__in=set(account_ids))
        .order_by("pk")
        .select_for_update(of=("self",))
    )
    return {row.account_id: row for row in rows}


def lock_transaction(*, ledger_id: uuid.UUID, transaction_id: uuid.UUID) -> Transaction:
    row = (
        Transaction.objects.filter(pk=transaction_id, ledger_id=ledger_id)
        .select_for_update(of=("self",))
        .first()
    )
    if row is None:
        raise ApiError(ErrorCode.NOT_FOUND, "The transaction was not found.")
    return row


def try_lock_key(*, ledger_id: uuid.UUID, key: str) -> None:
    """Take the idempotency key for this database transaction, or answer 409 0084 at once if a
    request with the same key is still running (PostgreSQL advisory lock, freed at COMMIT)."""
    if connection.vendor != "postgresql":
        return
    digest = hashlib.sha256(f"{ledger_id}:{key}".encode()).digest()
    lock_id = int.from_bytes(digest[:8], "big", signed=True)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_xact_lock(%s)", [lock_id])
        (acquired,) = cursor.fetchone()
    if not acquired:
        raise ApiError(
            ErrorCode.IDEMPOTENCY_KEY_RUNNING,
            "A request with this idempotency key is still being processed; retry shortly.",
        )
