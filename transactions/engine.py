"""The posting engine: the one way money moves. The API, the batch endpoint, the admin and every
command call it, and nothing below it.

A posting goes: validation (the caller parsed the request) -> lookups (templates and parents,
one query per kind at most) -> plan (the template and its variables make the legs) -> one
durable database transaction: the accounts read and their balances locked in balance-id order,
in one statement (``PostingLookups.lock_accounts``; a posting's first statement is also its
connection's health check, ``pipeline.first_statement_checks``) -> checks (accounts' asset,
status and flags) -> idempotency keys taken -> the legs applied to the balances in memory
(``money.BalanceBook``) -> one guarded write of transactions, operations and balances (the
statements of the database transaction share one cursor, ``db.one_cursor``), which carries
the COMMIT with it when nothing is written after it (``writes.write_posting``) -> the
caller renders the answer, once, after COMMIT, and records it on the key
(``answers.record_answers``).

A single posting is a batch of one, atomic: there is no second path. Commit, revert and cancel
(``transactions.states``) lock the transaction first, then apply the same book and write.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from ledgerproject.db import new_id, one_cursor
from ledgerproject.errors import LedgerError
from ledgerproject.pipeline import ConnectionGone, first_statement_checks
from organizations import ledger_copies
from organizations.models import Balance, Ledger
from organizations.services import ensure_ledger_active
from outbox import events
from transactions import idempotency
from transactions.dry_run import simulate
from transactions.guards import Guard, GuardBroken, guard_refusal
from transactions.locking import lock_balances
from transactions.lookups import PostingLookups, TemplatesChanged
from transactions.models import IdempotencyKey
from transactions.money import DEBIT, BalanceBook
from transactions.prepare import (
    Batch,
    ItemRefused,
    Outcome,
    PostingRequest,
    Prepared,
    attach_operations,
    balances_of,
    item_error,
    opening_steps,
    prepare,
)
from transactions.writes import write_posting

MAX_BATCH = 1000


class _Run:
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
        for index, request in enumerate(self.requests):
            if request.refused is not None:
                self.refuse(index, request.refused)
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
                    request.template_code, request.variables, request.inline
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
        if not self.lookups.cached_accounts(self.aliases()):
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
        and the balances they change locked, in one statement (a cached template found
        changed raises ``TemplatesChanged`` before anything is written); then the items
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

    def apply(self, skip: set[int], *, last: bool = False) -> list[int]:
        """Lock, apply in order (each item sees the balances the ones before it left), write
        under one guard. Answers the indexes posted. ``last``: nothing is written after the
        postings' write, unless an item is refused (its key is let go after it), so the write
        may carry the COMMIT (``writes.write_posting``)."""
        items = [i for i in self.open() if i in self.prepared and i not in skip]
        steps = {i: opening_steps(self.prepared[i].transaction, self.prepared[i].legs)
                 for i in items}  # fmt: skip
        balances = self.balances
        book = BalanceBook(balances, now=timezone.now())
        posted, operations = [], []
        for index in items:
            tx = self.prepared[index].transaction
            # Stamped now that the locks are held, so an account's operations are in time order
            # as they are in version order (the point-in-time balance relies on it).
            tx.created_at = tx.updated_at = book.now = timezone.now()
            try:
                item_operations = book.apply_all(tx, steps[index])
            except LedgerError as error:
                guard = Guard.of(self.ledger, [tx.asset_code], balances_of(steps[index]))
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
            self.ledger, (self.prepared[i].transaction.asset_code for i in posted), touched
        )
        ledger_copies.confirm_now(self.ledger)  # nothing is written from an unconfirmed copy
        txs = [self.prepared[i].transaction for i in posted]
        posted_events = [events.build(events.TRANSACTION_POSTED, tx) for tx in txs]
        balance_rows = [balances[a] for a in touched]
        commit = last and not self.refused
        written = write_posting(
            txs, operations, balance_rows, guard=guard, events=posted_events, commit=commit
        )
        if written:
            for index, event in zip(posted, posted_events, strict=True):
                tx = self.prepared[index].transaction
                self.outcomes[index] = Outcome(201, transaction=tx, rendered=event.data)
            return posted
        # Something was deleted while we waited for the locks: refuse what it touches, then
        # apply the others again from the balances as they are.
        for index in posted:
            asset = self.prepared[index].transaction.asset_code
            refusal = guard_refusal(Guard.of(self.ledger, [asset], balances_of(steps[index])))
            if refusal is not None:
                self.refuse(index, refusal)
        self.raise_first_refusal()
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


def _run(
    ledger: Ledger,
    requests: Sequence[PostingRequest],
    *,
    atomic: bool,
    claim: idempotency.Claim | None = None,
) -> Batch:
    """Post the requests; raises ``ItemRefused`` (atomic) at the lowest refused index."""
    ensure_ledger_active(ledger)
    if claim is not None:
        stored = idempotency.answered(ledger, [claim]).get(claim.key)
        replay = idempotency.replay_of(claim, stored)
        if replay is not None:
            return Batch([], replay=replay)
    cached, commits = True, True
    with first_statement_checks():  # no health check round trip before a request's posting
        while True:
            try:
                run = _Run(ledger, requests, atomic)
                return _attempt(run, claim, PostingLookups(ledger, cached=cached), commits=commits)
            except ConnectionGone:
                # The connection, kept from an earlier request, was found closed by the first
                # statement: nothing was written. Posted again on a new connection.
                continue
            except TemplatesChanged:
                # A template kept in this process changed: everything it planned (and refused) is
                # forgotten, the transaction was rolled back, and the postings are planned again
                # from the database.
                if not cached:
                    raise
                ledger_copies.unconfirm(ledger)  # confirmed again in the new transaction
                cached = False
            except GuardBroken:
                # Something was deleted while the write waited for its locks, and the write was to
                # commit with it: the transaction was rolled back. Posted again the ordinary way,
                # where the write answers false and the guard's refusal is explained.
                if not commits:
                    raise
                ledger_copies.unconfirm(ledger)
                commits = False


def _attempt(
    run: _Run, claim: idempotency.Claim | None, lookups: PostingLookups, *, commits: bool
) -> Batch:
    ledger, requests, atomic = run.ledger, run.requests, run.atomic
    run.replay_known()
    run.plan(lookups)
    run.refuse_before_locks()
    run.prepare_before_locks()
    if claim is None and not run.open():  # every item replayed or refused: nothing to write
        lookups.verify_templates()  # a refusal must not come from a changed template
        run.raise_first_refusal()
        return Batch([o for o in run.outcomes if o is not None])
    record = None
    try:
        with transaction.atomic(durable=True), one_cursor():
            if claim is not None:
                status = 201 if atomic else 200
                taken = idempotency.take(ledger, [idempotency.Stored(claim, status)])
                if claim.key in taken.busy:
                    raise idempotency.running()
                replay = idempotency.replay_of(claim, taken.stored.get(claim.key))
                if replay is not None:
                    return Batch([], replay=replay)
                record = taken.mine[claim.key]
            repeats = run.take_keys()
            run.lock()
            # Nothing is written after the postings' write but a batch key's outcome.
            run.apply(skip=set(repeats), last=commits and claim is None)
            run.raise_first_refusal()
            run.settle_keys(repeats)
            outcomes = [o for o in run.outcomes if o is not None]
            assert len(outcomes) == len(requests)
            if record is not None:
                idempotency.keep_outcome(record, [o.key_row() for o in outcomes])
    except IntegrityError as exc:
        if idempotency.is_conflict(exc):
            raise idempotency.running() from exc
        raise
    return Batch(outcomes, record=record)


def post(ledger: Ledger, request: PostingRequest, *, dry_run: bool = False) -> Outcome:
    """Post one transaction (a batch of one): a 201 outcome or a replay; refusals raise."""
    if dry_run:
        return simulate(ledger, request)
    try:
        (outcome,) = _run(ledger, [request], atomic=True).outcomes
    except ItemRefused as refused:
        raise refused.error from None
    return outcome


def post_batch(
    ledger: Ledger,
    requests: Sequence[PostingRequest],
    *,
    atomic: bool,
    claim: idempotency.Claim | None = None,
) -> Batch:
    """Up to ``MAX_BATCH`` postings, all or none (``atomic``: the first refusal raises with
    ``fields.index``) or each on its own. ``claim`` is the whole batch's key."""
    idempotency.refuse_shared_key(claim, (r.claim for r in requests))
    try:
        return _run(ledger, requests, atomic=atomic, claim=claim)
    except ItemRefused as refused:
        raise item_error(refused.index, refused.error) from None
