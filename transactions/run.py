"""One request's postings, step by step (``engine._attempt`` runs the steps in order): the
items' known keys replayed, their templates planned, the items checked and prepared (before the
locks when the process holds every account they name), their keys taken, their accounts read
and balances locked in one statement, the legs applied to the balances in memory and written
under one guard, and the keys settled. A single posting is a run of one item."""

from __future__ import annotations

import uuid
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from django.utils import timezone

from ledgerproject.db import new_id
from ledgerproject.errors import ErrorCode, LedgerError
from organizations.contents import conversion_accounts_ensure
from organizations.models import Balance, Ledger
from outbox import events
from transactions import idempotency
from transactions.guards import Guard, guard_refusal, instrument_missing
from transactions.locking import lock_balances
from transactions.lookups import PostingLookups
from transactions.models import IdempotencyKey
from transactions.money import DEBIT, BalanceBook, assets_of
from transactions.prepare import (
    ItemRefused,
    Outcome,
    PostingRequest,
    Prepared,
    attach_operations,
    balances_of,
    opening_steps,
    prepare,
    stamp_posted,
)
from transactions.writes import write_posting


class Run:
    """One request's postings, from parsed items to outcomes."""

    def __init__(self, ledger: Ledger, requests: Sequence[PostingRequest], atomic: bool) -> None:
        self.ledger, self.requests, self.atomic = ledger, requests, atomic
        self.outcomes: list[Outcome | None] = [None] * len(requests)
        self.prepared: dict[int, Prepared] = {}
        self.refused: dict[int, LedgerError] = {}
        self.records: dict[int, IdempotencyKey] = {}
        self.planned: dict[int, tuple[Any, Any]] = {}
        self.balances: dict[uuid.UUID, Balance] = {}
        self.lookups: PostingLookups
        self.tx_ids: dict[int, uuid.UUID] = {}
        self.key_refused: set[int] = set()  # refused by their keys (in flight, or mismatched)
        self.early = False  # prepared before the locks, from accounts kept in this process

    def refuse(self, index: int, error: LedgerError) -> None:
        self.outcomes[index] = Outcome(error.http_status, error=error)
        self.refused[index] = error

    def open(self) -> list[int]:
        return [i for i, outcome in enumerate(self.outcomes) if outcome is None]

    def raise_first_refusal(self) -> None:
        """Atomic: abort with the refused item of the lowest index, whichever check found it."""
        if self.atomic and self.refused:
            index = min(self.refused)
            raise ItemRefused(index, self.refused[index])

    def replay_known(self) -> None:
        """Before any work: the items whose keys were already answered replay that answer."""
        claims = [c for i in self.open() if (c := self.requests[i].claim)]
        self._replay_from(idempotency.answered(self.ledger, claims))

    def _replay_from(self, records: Mapping[str, IdempotencyKey]) -> None:
        for index in self.open():
            claim = self.requests[index].claim
            if claim is None:
                continue
            try:
                record = idempotency.replay_of(claim, records.get(claim.key))
            except LedgerError as error:
                self.refuse(index, error)
                continue
            if record is not None:
                self.outcomes[index] = Outcome(record.response_status, replay=record)

    def plan(self, lookups: PostingLookups) -> None:
        """Before any lock: each open item's template and plan, and the parents they name."""
        self.lookups = lookups
        stored = (self.requests[i] for i in self.open())
        lookups.preload_templates(r.template_code for r in stored if r.inline is None)
        for index in self.open():
            request = self.requests[index]
            try:
                self.planned[index] = lookups.plan(
                    request.template_code,
                    request.variables,
                    request.inline,
                    at=request.effective_at,
                    terms=request.rate,
                )
            except LedgerError as error:
                self.refuse(index, error)
            else:
                # Its id now: its key's row names it, and the key may be taken before the
                # transaction is prepared (``lock``).
                self.tx_ids[index] = new_id()
        lookups.preload_parents(
            pid for i in self.planned if (pid := self.requests[i].parent_id) is not None
        )

    def make_conversion_accounts(self) -> None:
        """Inside the database transaction, before the locks: the conversion accounts of the
        open items' conversions, made by the first conversion in or out of an asset
        (``contents.conversion_accounts_ensure``); an item converting from or to an asset that
        is no longer an active instrument is refused (0034)."""
        codes = {
            index: [plan.conversion[part]["assetCode"] for part in ("sent", "delivered")]
            for index, (_, plan) in self.planned.items()
            if self.outcomes[index] is None and plan.conversion is not None
        }
        if not codes:
            return
        # Every asset of the request held once, in one order: two requests never wait for
        # each other crosswise.
        every = {code for item in codes.values() for code in item}
        missing = conversion_accounts_ensure(ledger=self.ledger, asset_codes=every)
        for index, item in codes.items():
            absent = [code for code in item if code in missing]
            if absent:
                self.refuse(index, instrument_missing(absent[0]))

    def aliases(self, *, written: bool = False) -> set[str]:
        """The accounts the open planned items name; ``written``: only those whose balances
        they change (a pending posting holds on its sources and leaves its destinations
        alone, so it does not lock them). A replayed or refused item names none: a repeat
        refused while its first runs must not wait for the first's balances."""
        names: set[str] = set()
        for index, (_, plan) in self.planned.items():
            if self.outcomes[index] is not None:
                continue
            pending = self.requests[index].pending
            holds = plan.pending if pending is None else pending
            names.update(
                leg.alias for leg in plan.legs if not (written and holds and leg.direction != DEBIT)
            )
        return names

    def refuse_before_locks(self) -> None:
        """An atomic batch with an item refused by now is refused, with no key taken and no
        lock: by the lowest refused item, the others' accounts read and checked first (with no
        lock, as a dry run reads them), so that a lower item's refusal wins."""
        if not (self.atomic and self.refused):
            return
        self.lookups.verify_templates()  # a refusal must not come from a changed template
        self.lookups.preload_accounts(self.aliases())
        self.prepare()
        self.raise_first_refusal()

    def prepare_before_locks(self) -> None:
        """When this process holds a copy of every account the planned items name, check and
        prepare them now, before any lock, so the locks are held the shorter. Kept only if it
        refused nothing (a refusal is never answered from a copy: what it refused is
        forgotten) and the statement that locks the balances reads the very same accounts
        (``lock``)."""
        if not self.lookups.accounts_from_copies(self.aliases()):
            return
        before = set(self.refused)
        self.prepare()
        refused = set(self.refused) - before
        for index in refused:
            del self.refused[index]
            self.outcomes[index] = None
        if refused:
            self.prepared.clear()
        self.early = not refused

    def lock(self) -> None:
        """Inside the database transaction, after the keys: the planned items' accounts read,
        and the balances they change locked, in one statement (a kept template found changed
        raises ``copies.TemplatesChanged``, and nothing is committed); then the items
        checked and prepared with the accounts read, unless they were before the locks with
        the same ones. Those checks come before the keys' refusals, as they would have had
        the accounts been read before the keys were taken: an item whose key was refused is
        checked too, and its own refusal replaces the key's; an atomic batch with a refused
        item is refused by the lowest such item."""
        read = self.aliases() | {
            leg.alias for i in self.key_refused for leg in self.planned[i][1].legs
        }
        self.balances, same = self.lookups.lock_accounts(self.aliases(written=True), read)
        if self.early and same:
            return
        self.early = False
        self.prepared.clear()
        refused = self.prepare(also=self.key_refused)
        if self.atomic and refused:
            index = min(refused)
            raise ItemRefused(index, self.refused[index])

    def prepare(self, also: Collection[int] = ()) -> set[int]:
        """Each open planned item's transaction and legs, its parent and accounts checked
        (and those of the items in ``also``: what they refuse replaces their refusal, and
        they stay unprepared otherwise). Answers the items it refused."""
        refused = set()
        for index, pair in self.planned.items():
            if self.outcomes[index] is not None and index not in also:
                continue  # replayed or refused since it was planned
            try:
                prepared = prepare(
                    self.ledger, self.lookups, self.requests[index], pair, self.tx_ids[index]
                )
            except LedgerError as error:
                self.refuse(index, error)
                refused.add(index)
            else:
                if index not in also:
                    self.prepared[index] = prepared
        return refused

    def take_keys(self) -> dict[int, int]:
        """Take the items' keys, writing their rows; answer ``{index: earlier index}`` for
        repeats of a key within the batch."""
        first: dict[str, int] = {}
        repeats: dict[int, int] = {}
        for index in (i for i in self.open() if self.requests[i].claim):
            claim = self.requests[index].claim
            assert claim is not None
            if claim.key not in first:
                first[claim.key] = index
            elif self.requests[first[claim.key]].claim != claim:
                self.refuse(index, idempotency.mismatch())
                self.key_refused.add(index)
            else:
                repeats[index] = first[claim.key]
        rows = []
        for index in first.values():
            claim = self.requests[index].claim
            assert claim is not None
            rows.append(idempotency.Stored(claim, 201, self.tx_ids.get(index)))
        taken = idempotency.take(self.ledger, rows)
        self._replay_from(taken.stored)
        for key, index in first.items():
            if key in taken.busy:
                self.refuse(index, idempotency.running())
                self.key_refused.add(index)
            elif key in taken.mine:
                self.records[index] = taken.mine[key]
        return repeats

    def apply(self, skip: set[int]) -> list[int]:
        """Lock, apply in order (each item sees the balances the ones before it left), write
        under one guard. Answers the indexes posted."""
        items = [i for i in self.open() if i in self.prepared and i not in skip]
        steps = {i: opening_steps(self.prepared[i].transaction, self.prepared[i].legs)
                 for i in items}  # fmt: skip
        balances = self.balances
        book = BalanceBook(balances, now=timezone.now())
        posted, operations = [], []
        for index in items:
            tx = self.prepared[index].transaction
            book.now = stamp_posted(tx, timezone.now(), self.prepared[index].effective_at)
            try:
                item_operations = book.apply_all(tx, steps[index])
            except LedgerError as error:
                guard = Guard.of(
                    self.ledger,
                    assets_of(tx, self.prepared[index].legs),
                    balances_of(steps[index]),
                    tx.effective_at,
                )
                self.refuse(index, guard_refusal(guard) or error)
                continue
            attach_operations(tx, item_operations)
            operations += item_operations
            posted.append(index)
        if not posted:
            return []
        self.raise_first_refusal()
        touched = sorted({leg.account_id for i in posted for leg, _ in steps[i]})
        guard = Guard.of(
            self.ledger,
            (
                asset
                for i in posted
                for asset in assets_of(self.prepared[i].transaction, self.prepared[i].legs)
            ),
            touched,
            min(op.effective_at for op in operations),
        )
        self.lookups.confirm_before_write()  # nothing is written from an unconfirmed copy
        txs = [self.prepared[i].transaction for i in posted]
        posted_events = [events.build(events.TRANSACTION_POSTED, tx) for tx in txs]
        balance_rows = [balances[a] for a in touched]
        written = write_posting(txs, operations, balance_rows, guard=guard, events=posted_events)
        if written:
            for index, event in zip(posted, posted_events, strict=True):
                tx = self.prepared[index].transaction
                self.outcomes[index] = Outcome(201, transaction=tx, rendered=event.data)
            return posted
        # Something was deleted (or a period closed) while we waited for the locks: refuse
        # what it touches, then apply the others again from the balances as they are. When no
        # item is to blame the guard would refuse again: that is an error, not a loop.
        blamed = False
        for index in posted:
            tx = self.prepared[index].transaction
            refusal = guard_refusal(
                Guard.of(
                    self.ledger,
                    assets_of(tx, self.prepared[index].legs),
                    balances_of(steps[index]),
                    tx.effective_at,
                )
            )
            if refusal is not None:
                self.refuse(index, refusal)
                blamed = True
        self.raise_first_refusal()
        if not blamed:
            raise LedgerError(
                ErrorCode.WRITE_CONFLICT,
                "The ledger changed while this request was written; nothing was written. "
                "Send it again.",
            )
        self.balances = lock_balances(self.ledger.organization_id, balances)
        return self.apply(skip)

    def settle_keys(self, repeats: dict[int, int]) -> None:
        """Refused items keep no key; posted ones point at their rows; repeats follow."""
        idempotency.release(r for i, r in self.records.items() if i in self.refused)
        for index, record in self.records.items():
            outcome = self.outcomes[index]
            if outcome is not None and index not in self.refused:
                outcome.record = record
        for index, earlier in repeats.items():
            first = self.outcomes[earlier]
            assert first is not None
            self.outcomes[index] = Outcome(
                first.status,
                first.transaction,
                first.error,
                replay=first.record or first.replay,
                rendered=first.rendered,
            )
