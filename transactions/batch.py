"""Batch posting: up to 1,000 postings in one request, all or nothing (``atomic``) or each on
its own.

Every item goes through the same checks as a single posting, in the same order, with the same
errors. What changes is the cost: preparation (templates, plans, parents, accounts) takes one
query per kind for the whole batch; then one durable database transaction claims the
idempotency keys, locks the balances of the union of the accounts once in id order, checks the
instruments, applies the postings in order in memory (each sees the balances the ones before it
left, exactly as if they had been posted one after the other), and writes the transactions,
operations, new balances and keys in bulk: a handful of statements whatever the batch size.

Atomic: the first refused item aborts the batch; its error carries ``fields.index``.
Not atomic: a refused item writes nothing and is answered with its error; the others post.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from instruments.models import Instrument
from ledgerproject.api.errors import ApiError, ErrorCode
from organizations.locking import lock_ledger_active
from organizations.models import Account, Ledger
from transactions import services
from transactions.locking import lock_balances, try_lock_keys
from transactions.models import Balance, IdempotencyKey, Operation, Transaction
from transactions.serializers import transaction_data

MAX_ITEMS = 1000


@dataclass
class BatchEntry:
    """One item as the view parsed it: the posting's arguments, or why it is refused."""

    data: dict[str, Any] | None
    error: ApiError | None = None
    key: str | None = None
    request_hash: str = ""


@dataclass
class ItemOutcome:
    status: int
    body: Any
    replayed: bool = False

    @property
    def ok(self) -> bool:
        return self.status < 400


def item_error(index: int, error: ApiError) -> ApiError:
    """An item's error as the error of an atomic batch: same code, ``fields.index`` added."""
    fields = {"index": str(index)}
    fields.update({f"transactions[{index}].{k}": v for k, v in (error.fields or {}).items()})
    return ApiError(error.error, f"transactions[{index}]: {error.description}", fields=fields)


_State = tuple[int, int, int, int, dt.datetime]


def _state(balance: Balance) -> _State:
    return (balance.available, balance.on_hold, balance.scale, balance.version, balance.updated_at)


def _restore(balance: Balance, state: _State) -> None:
    (balance.available, balance.on_hold, balance.scale, balance.version, balance.updated_at) = state


class _Batch:
    def __init__(
        self, ledger: Ledger, entries: Sequence[BatchEntry], *, atomic: bool, ttl_seconds: int
    ) -> None:
        self.ledger = ledger
        self.entries = entries
        self.atomic = atomic
        self.ttl = dt.timedelta(seconds=ttl_seconds)
        self.outcomes: list[ItemOutcome | None] = [None] * len(entries)
        self.prepared: dict[int, services.PreparedPosting] = {}
        self.posted: dict[int, Transaction] = {}
        self.refused: dict[int, ApiError] = {}

    def refuse(self, index: int, error: ApiError) -> None:
        self.outcomes[index] = ItemOutcome(error.http_status, error.as_body())
        self.refused[index] = error

    def raise_first_refusal(self) -> None:
        """Atomic: abort with the refused item of the lowest index, whichever check found it."""
        if self.atomic and self.refused:
            index = min(self.refused)
            raise item_error(index, self.refused[index])

    def replay(self, index: int, record: IdempotencyKey) -> None:
        self.outcomes[index] = ItemOutcome(
            record.response_status, record.response_body, replayed=True
        )

    def open(self) -> list[int]:
        return [i for i, outcome in enumerate(self.outcomes) if outcome is None]

    # -- before the database transaction: what needs no lock ------------------------------

    def validate_and_replay(self) -> None:
        for index, entry in enumerate(self.entries):
            if entry.error is not None:
                self.refuse(index, entry.error)
        keys = {self.entries[i].key for i in self.open() if self.entries[i].key}
        if not keys:
            return
        records = {
            r.key: r
            for r in IdempotencyKey.objects.filter(
                ledger_id=self.ledger.pk, key__in=keys, expires_at__gt=timezone.now()
            )
        }
        for index in self.open():
            record = records.get(self.entries[index].key or "")
            if record is None:
                continue
            if record.request_hash != self.entries[index].request_hash:
                self.refuse(index, services.key_mismatch())
            else:
                self.replay(index, record)

    def prepare(self) -> None:
        lookups = services.PostingLookups(self.ledger)
        data = {i: self.entries[i].data or {} for i in self.open()}
        lookups.preload_templates(d["template_code"] for d in data.values())
        planned = {}
        for index, item in data.items():
            try:
                planned[index] = services.posting_plan(
                    lookups, item["template_code"], item.get("variables", {})
                )
            except ApiError as error:
                self.refuse(index, error)
        lookups.preload_parents(
            data[i]["parent_id"] for i in planned if data[i].get("parent_id") is not None
        )
        lookups.preload_accounts(leg.alias for _, plan in planned.values() for leg in plan.legs)
        for index, pair in planned.items():
            try:
                self.prepared[index] = services.transaction_prepare(
                    ledger=self.ledger, lookups=lookups, planned=pair, **data[index]
                )
            except ApiError as error:
                self.refuse(index, error)

    # -- inside the database transaction ---------------------------------------------------

    def claim_keys(self) -> dict[int, int]:
        """Claim the items' keys; answer ``{index: earlier index}`` for repeats in the batch."""
        open_items = [i for i in self.open() if self.entries[i].key]
        keys = {self.entries[i].key or "" for i in open_items}
        if not keys:
            return {}
        busy = try_lock_keys(ledger_id=self.ledger.pk, keys=keys)
        records = {
            r.key: r for r in IdempotencyKey.objects.filter(ledger_id=self.ledger.pk, key__in=keys)
        }
        now = timezone.now()
        expired = [r.pk for r in records.values() if r.expires_at <= now]
        if expired:
            IdempotencyKey.objects.filter(pk__in=expired).delete()
        first: dict[str, int] = {}
        repeats: dict[int, int] = {}
        for index in open_items:
            entry = self.entries[index]
            key = entry.key or ""
            record = records.get(key)
            if key in busy:
                self.refuse(index, services.key_running())
            elif record is not None and record.expires_at > now:
                if record.request_hash != entry.request_hash:
                    self.refuse(index, services.key_mismatch())
                else:
                    self.replay(index, record)
            elif key in first:
                if self.entries[first[key]].request_hash != entry.request_hash:
                    self.refuse(index, services.key_mismatch())
                else:
                    repeats[index] = first[key]
            else:
                first[key] = index
        return repeats

    def apply(self, skip: set[int]) -> None:
        items = [i for i in self.open() if i in self.prepared and i not in skip]
        steps_of = {}
        account_ids: set[uuid.UUID] = set()
        for index in items:
            tx = services.new_transaction(self.prepared[index], timezone.now())
            steps_of[index] = (tx, services.opening_legs(tx, self.prepared[index].legs))
            account_ids.update(leg.account_id for leg, _ in steps_of[index][1])
        balances = lock_balances(account_ids)
        assets = {self.prepared[i].plan.asset for i in items}
        active = set(
            Instrument.objects.filter(
                ledger_id=self.ledger.pk, code__in=assets, deleted_at__isnull=True
            ).values_list("code", flat=True)
        )
        deleted = set(
            Account.objects.filter(pk__in=account_ids, deleted_at__isnull=False).values_list(
                "pk", flat=True
            )
        )
        operations: list[Operation] = []
        touched: set[uuid.UUID] = set()
        for index in items:
            tx, steps = steps_of[index]
            if tx.asset_code not in active:
                self.refuse(index, services.instrument_missing(tx.asset_code))
                continue
            if any(leg.account_id in deleted for leg, _ in steps):
                guard = services.Guard(
                    self.ledger.pk, tx.asset_code, tuple(leg.account_id for leg, _ in steps)
                )
                try:
                    services.check_guard(guard)
                except ApiError as error:
                    self.refuse(index, error)
                    continue
            tx.created_at = tx.updated_at = timezone.now()
            saved = {leg.account_id: _state(balances[leg.account_id]) for leg, _ in steps}
            book = services.BalanceBook(balances, now=tx.created_at)
            try:
                item_operations = [book.apply(tx, leg, effect=effect) for leg, effect in steps]
            except ApiError as error:
                for account_id, state in saved.items():
                    _restore(balances[account_id], state)
                self.refuse(index, error)
                continue
            services.attach_operations(tx, item_operations)
            operations += item_operations
            touched.update(saved)
            self.posted[index] = tx
        if self.posted:
            services.write_posting(
                list(self.posted.values()), operations, [balances[a] for a in sorted(touched)]
            )
        for index, tx in self.posted.items():
            self.outcomes[index] = ItemOutcome(201, transaction_data(tx))

    def store_keys(self, repeats: dict[int, int]) -> None:
        now = timezone.now()
        IdempotencyKey.objects.bulk_create(
            IdempotencyKey(
                organization_id=self.ledger.organization_id,
                ledger_id=self.ledger.pk,
                key=self.entries[index].key,
                request_hash=self.entries[index].request_hash,
                response_status=201,
                response_body=self.outcomes[index].body,  # type: ignore[union-attr]
                transaction=tx,
                created_at=now,
                expires_at=now + self.ttl,
            )
            for index, tx in self.posted.items()
            if self.entries[index].key
        )
        for index, earlier in repeats.items():
            outcome = self.outcomes[earlier]
            assert outcome is not None
            self.outcomes[index] = ItemOutcome(outcome.status, outcome.body, replayed=outcome.ok)


def transactions_post_batch(
    *,
    ledger: Ledger,
    entries: Sequence[BatchEntry],
    atomic: bool,
    ttl_seconds: int,
    claim: services.IdempotencyClaim | None = None,
) -> list[ItemOutcome]:
    """Post a batch; ``claim`` is the whole batch's idempotency key (its ``render`` gets the
    outcomes). Raises the failing item's error (``item_error``) when ``atomic``, and
    ``services.IdempotentReplay`` when the batch's key was already answered."""
    if claim is not None and any(entry.key == claim.key for entry in entries):
        raise ApiError(
            ErrorCode.IDEMPOTENCY_KEY_MISMATCH,
            "The batch's idempotency key is also the key of one of its items; use distinct keys.",
        )
    batch = _Batch(ledger, entries, atomic=atomic, ttl_seconds=ttl_seconds)
    batch.validate_and_replay()
    batch.prepare()
    batch.raise_first_refusal()
    try:
        with transaction.atomic(durable=True):
            lock_ledger_active(ledger.pk)
            if claim is not None:
                services.claim_key(ledger, claim)
            repeats = batch.claim_keys()
            batch.apply(skip=set(repeats))
            batch.raise_first_refusal()
            batch.store_keys(repeats)
            outcomes = [o for o in batch.outcomes if o is not None]
            assert len(outcomes) == len(entries)
            if claim is not None:
                services.store_key(ledger, claim, outcomes)
    except IntegrityError as exc:
        if "idempotency" in str(exc).lower():
            raise services.key_running() from exc
        raise
    return outcomes
