"""Idempotency keys: the one place their rules live.

- A key (``idempotencyKey`` or ``Idempotency-Key``, 1 to 255 characters, no NUL) is scoped to
  the ledger. Without a key, a non-zero ``tolerance`` makes the SHA-256 of the body the key, so
  an identical request within that many seconds is answered as a replay. ``tolerance`` is the
  key's lifetime otherwise (default a day, at most a week).
- Before any work, a key already answered replays that answer (the same body with a different
  key is 422 0084). Inside the posting's database transaction the key is taken with an advisory
  lock (PostgreSQL; a second request with it while the first runs is 409 0084), checked again,
  and its row is written in the same transaction as the posting, so the two commit together or
  not at all. A request that failed stores nothing and may be retried with the same key.
- The answer is rendered once, by the API, after the locks are released, and recorded on the
  row (``record_answers``). A row whose answer was never recorded (the process died between the
  commit and that write) replays from what it references: its transaction, or a batch's
  outcomes.
- A unique violation on the key is recognised by the constraint's name, not by its message.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, connection
from django.utils import timezone

from ledgerproject.db import by_database, cursor, field_of
from ledgerproject.errors import ErrorCode, LedgerError
from organizations.models import Ledger
from transactions.models import IdempotencyKey

DEFAULT_TTL = 86_400
MAX_TOLERANCE = 604_800
MAX_KEY_LENGTH = 255
CONSTRAINT = "idempotency_key_uniq"


@dataclass(frozen=True)
class Claim:
    """A key to take for one request (or one item of a batch)."""

    key: str
    request_hash: str
    ttl_seconds: int = DEFAULT_TTL


def request_hash(body: Any) -> str:
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


# The ``tolerance`` header: whole seconds from 0 to ``MAX_TOLERANCE``, in at most six digits.
TOLERANCE_PATTERN = "^(?:[0-9]{1,5}|[0-5][0-9]{5}|60[0-3][0-9]{3}|604[0-7][0-9]{2}|604800)$"
_TOLERANCE = re.compile(TOLERANCE_PATTERN)


def parse_tolerance(raw: str | None) -> int | None:
    """The header's seconds; None when it was not sent (sent empty, it is refused)."""
    if raw is None:
        return None
    if _TOLERANCE.fullmatch(raw) is None:
        raise LedgerError(
            ErrorCode.BAD_REQUEST,
            f"tolerance must be a whole number of seconds from 0 to {MAX_TOLERANCE}.",
            fields={"tolerance": "invalid"},
        )
    return int(raw)


def check_key(key: str, field: str = "idempotencyKey") -> str:
    if not 1 <= len(key) <= MAX_KEY_LENGTH or "\x00" in key:
        raise LedgerError(
            ErrorCode.BAD_REQUEST,
            f"{field} must be 1 to {MAX_KEY_LENGTH} characters, none of them NUL.",
            fields={field: "invalid length or a NUL character"},
        )
    return key


def claim_for(*, key: str | None, seconds: int | None, body: Any) -> Claim | None:
    """The claim a request makes: its key, or its body's hash under a tolerance of ``seconds``
    (``parse_tolerance``), or none."""
    if key is None and not seconds:
        return None  # nothing to claim: the body is not even hashed
    digest = request_hash(body)
    if key is None:
        return Claim(f"sha256:{digest}", digest, seconds or DEFAULT_TTL)
    return Claim(check_key(key.strip()), digest, seconds or DEFAULT_TTL)


def mismatch() -> LedgerError:
    return LedgerError(
        ErrorCode.IDEMPOTENCY_KEY_MISMATCH,
        "This idempotency key was already used with a different request body.",
    )


def refuse_shared_key(batch: Claim | None, items: Iterable[Claim | None]) -> None:
    """A batch's key may not also be the key of one of its items."""
    if batch is not None and any(item and item.key == batch.key for item in items):
        raise LedgerError(
            ErrorCode.IDEMPOTENCY_KEY_MISMATCH,
            "The batch's idempotency key is also the key of one of its items; use distinct keys.",
        )


def running() -> LedgerError:
    return LedgerError(
        ErrorCode.IDEMPOTENCY_KEY_RUNNING,
        "A request with this idempotency key is still being processed; retry shortly.",
    )


def answered(ledger: Ledger, claims: Iterable[Claim]) -> dict[str, IdempotencyKey]:
    """Before any work: the unexpired answers already stored for these keys (one query)."""
    keys = {claim.key for claim in claims}
    if not keys:
        return {}
    rows = IdempotencyKey.objects.filter(
        organization_id=ledger.organization_id,
        ledger_id=ledger.pk,
        key__in=keys,
        expires_at__gt=timezone.now(),
    ).select_related("transaction")
    return {row.key: row for row in rows}


def replay_of(claim: Claim, record: IdempotencyKey | None) -> IdempotencyKey | None:
    """The stored answer this claim replays, or None; 422 0084 when the body differs."""
    if record is None:
        return None
    if record.request_hash != claim.request_hash:
        raise mismatch()
    return record


@dataclass(frozen=True)
class Stored:
    """A key row to write with a posting: its status and what it replays from."""

    claim: Claim
    status: int
    transaction_id: uuid.UUID | None = None


@dataclass
class Taken:
    """The keys of a request, once taken inside its database transaction."""

    busy: set[str]  # held by a request still running: 409 0084
    stored: dict[str, IdempotencyKey]  # answered before: replay (or 422 0084)
    mine: dict[str, IdempotencyKey]  # written now, committed with the posting


INSERT_KEYS = """
INSERT INTO transactions_idempotencykey (organization_id, ledger_id, key, request_hash,
  response_status, transaction_id, created_at, expires_at)
SELECT %s, %s, k, h, s, t, %s, e FROM unnest(%s::varchar[], %s::varchar[], %s::smallint[],
  %s::uuid[], %s::timestamptz[]) AS v(k, h, s, t, e)
ON CONFLICT DO NOTHING RETURNING id, key
"""
INSERT_KEY = """
INSERT INTO transactions_idempotencykey (organization_id, ledger_id, key, request_hash,
  response_status, transaction_id, created_at, expires_at)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING RETURNING id, key
"""


def _insert_postgresql(
    ledger: Ledger, rows: Sequence[Stored], now: dt.datetime, expires: list[dt.datetime]
) -> list[tuple[int, str]]:
    """All the rows in one statement."""
    with cursor() as shared:
        shared.execute(
            INSERT_KEYS,
            [ledger.organization_id, ledger.pk, now, [r.claim.key for r in rows],
             [r.claim.request_hash for r in rows], [r.status for r in rows],
             [r.transaction_id for r in rows], expires],
        )  # fmt: skip
        return shared.fetchall()


def _insert_sqlite(
    ledger: Ledger, rows: Sequence[Stored], now: dt.datetime, expires: list[dt.datetime]
) -> list[tuple[int, str]]:
    """A statement per row (SQLite has no arrays to unnest)."""
    written: list[tuple[int, str]] = []
    with cursor() as shared:
        for row, expiry in zip(rows, expires, strict=True):
            values = {
                "organization": ledger.organization_id, "ledger": ledger.pk,
                "key": row.claim.key, "request_hash": row.claim.request_hash,
                "response_status": row.status, "transaction": row.transaction_id,
                "created_at": now, "expires_at": expiry,
            }  # fmt: skip
            shared.execute(
                INSERT_KEY,
                [field_of(IdempotencyKey, name).get_db_prep_save(value, connection)
                 for name, value in values.items()],
            )  # fmt: skip
            written += shared.fetchall()
    return written


_insert_rows = by_database(postgresql=_insert_postgresql, sqlite=_insert_sqlite)


def _insert(ledger: Ledger, rows: Sequence[Stored]) -> dict[str, IdempotencyKey]:
    """Write the rows whose keys are free; answer them by key. The transaction a row names is
    written later in the same database transaction: the foreign key is checked at COMMIT."""
    if not rows:
        return {}
    now = timezone.now()
    expires = [now + dt.timedelta(seconds=r.claim.ttl_seconds) for r in rows]
    written = _insert_rows(ledger, rows, now, expires)
    return {key: IdempotencyKey(pk=pk, key=key) for pk, key in written}


def _key_lock_id(ledger_id: uuid.UUID, key: str) -> int:
    digest = hashlib.sha256(f"{ledger_id}:{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def _try_lock_keys_postgresql(*, ledger_id: uuid.UUID, keys: Iterable[str]) -> set[str]:
    """Take many idempotency keys in one statement (advisory locks, released with the
    transaction); answer the ones another request holds."""
    wanted = sorted(set(keys))
    if not wanted:
        return set()
    with cursor() as shared:
        shared.execute(
            "SELECT pg_try_advisory_xact_lock(k) FROM unnest(%s::bigint[]) WITH ORDINALITY "
            "AS t(k, n) ORDER BY n",
            [[_key_lock_id(ledger_id, key) for key in wanted]],
        )
        taken = [row[0] for row in shared.fetchall()]
    return {key for key, ok in zip(wanted, taken, strict=True) if not ok}


def _try_lock_keys_sqlite(*, ledger_id: uuid.UUID, keys: Iterable[str]) -> set[str]:
    """None taken: SQLite's IMMEDIATE transactions serialize writers, so a second request with
    a key waits for the first and then finds its row."""
    return set()


_try_lock_keys = by_database(postgresql=_try_lock_keys_postgresql, sqlite=_try_lock_keys_sqlite)


def take(ledger: Ledger, rows: Sequence[Stored]) -> Taken:
    """Inside the posting's transaction: take each key, writing its row at once (one
    statement, plus the advisory locks on PostgreSQL). A key another request holds is busy; a
    key already answered is read (only then); an expired one is replaced."""
    by_key = {row.claim.key: row for row in rows}
    if not by_key:
        return Taken(set(), {}, {})
    busy = _try_lock_keys(ledger_id=ledger.pk, keys=by_key)
    mine = _insert(ledger, [row for key, row in by_key.items() if key not in busy])
    conflicts = [key for key in by_key if key not in busy and key not in mine]
    stored: dict[str, IdempotencyKey] = {}
    if conflicts:
        now = timezone.now()
        existing = IdempotencyKey.objects.filter(
            organization_id=ledger.organization_id, ledger_id=ledger.pk, key__in=conflicts
        )
        for record in existing:
            stored[record.key] = record
        expired = [key for key, record in stored.items() if record.expires_at <= now]
        if expired:
            IdempotencyKey.objects.filter(
                organization_id=ledger.organization_id, ledger_id=ledger.pk, key__in=expired
            ).delete()
            mine.update(_insert(ledger, [by_key[key] for key in expired]))
            stored = {k: r for k, r in stored.items() if k not in expired}
    return Taken(busy, stored, mine)


def release(records: Iterable[IdempotencyKey]) -> None:
    """Drop the rows of items refused after all (a refused request stores nothing)."""
    ids = [record.pk for record in records]
    if ids:
        IdempotencyKey.objects.filter(pk__in=ids).delete()


def keep_outcome(record: IdempotencyKey, outcome: list[dict[str, Any]]) -> None:
    """What a batch key replays from if its rendered answer is never recorded."""
    IdempotencyKey.objects.filter(pk=record.pk).update(outcome=outcome)


def keep_answer(ledger: Ledger, record: IdempotencyKey, body: Any) -> None:
    """Inside the request's own database transaction: the answer, on the key's row (one
    statement, on the organization's node)."""
    IdempotencyKey.objects.filter(organization_id=ledger.organization_id, pk=record.pk).update(
        response_body=body
    )


def record_answers(records: Sequence[IdempotencyKey], bodies: Sequence[Any]) -> None:
    """After COMMIT: keep each rendered answer on its row (one statement)."""
    if not records:
        return
    for record, body in zip(records, bodies, strict=True):
        record.response_body = body
    IdempotencyKey.objects.bulk_update(list(records), ["response_body"])


def _is_conflict_postgresql(exc: IntegrityError) -> bool:
    """The unique key constraint was violated (a request with the key committed meanwhile)."""
    diag = getattr(exc.__cause__, "diag", None)
    return getattr(diag, "constraint_name", None) == CONSTRAINT


def _is_conflict_sqlite(exc: IntegrityError) -> bool:
    """SQLite names the constraint's columns, not the constraint."""
    table = IdempotencyKey._meta.db_table
    constraint = next(c for c in IdempotencyKey._meta.constraints if c.name == CONSTRAINT)
    columns = ", ".join(
        f"{table}.{field_of(IdempotencyKey, f).column}"
        for f in constraint.fields  # type: ignore[attr-defined]
    )
    return str(exc) == f"UNIQUE constraint failed: {columns}"


is_conflict = by_database(postgresql=_is_conflict_postgresql, sqlite=_is_conflict_sqlite)


def purge(*, now: dt.datetime | None = None) -> int:
    deleted, _ = IdempotencyKey.objects.filter(expires_at__lte=now or timezone.now()).delete()
    return deleted
