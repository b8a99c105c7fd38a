"""The posting engine: the one way money moves. The API, the batch endpoint, the admin and every
command call it, and nothing below it.

A posting goes: validation (the caller parsed the request) -> lookups (templates and parents,
one query per kind at most) -> plan (the template and its variables make the legs) -> one
durable database transaction: the accounts read and their balances locked in balance-id order,
in one statement (``PostingLookups.lock_accounts``) -> checks (accounts' asset,
status and flags) -> idempotency keys taken -> the legs applied to the balances in memory
(``money.BalanceBook``) -> one guarded write of transactions, operations and balances (the
statements of the database transaction share one cursor, ``db.one_cursor``) -> COMMIT -> the
caller renders the answer, once, after COMMIT, and records it on the key
(``answers.record_answers``).

The steps of one request's postings are ``run.Run``'s; here they are run in order, once, inside
the database transaction. A single posting is a batch of one, atomic: there is no second path.
Commit, revert and cancel (``transactions.states``) lock the transaction first, then apply the
same book and write.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence

from django.db import IntegrityError, transaction

from ledgerproject.db import one_cursor
from ledgerproject.health import first_statement_checks
from organizations.models import Ledger
from organizations.services import ensure_ledger_active
from transactions import copies, idempotency
from transactions.dry_run import simulate
from transactions.lookups import PostingLookups
from transactions.prepare import (
    Batch,
    ItemRefused,
    Outcome,
    PostingRequest,
    item_error,
)
from transactions.run import Run

MAX_BATCH = 1000
# Called with the outcomes inside the posting's database transaction, once its writes are made:
# what must commit with the posting or not at all (the scheduler marks its row posted there).
# Whatever it raises rolls the posting back and reaches the caller.
Within = Callable[[list[Outcome]], None]


def _run(
    ledger: Ledger,
    requests: Sequence[PostingRequest],
    *,
    atomic: bool,
    claim: idempotency.Claim | None = None,
    within: Within | None = None,
) -> Batch:
    """Post the requests; raises ``ItemRefused`` (atomic) at the lowest refused index."""
    ensure_ledger_active(ledger)
    if claim is not None:
        stored = idempotency.answered(ledger, [claim]).get(claim.key)
        replay = idempotency.replay_of(claim, stored)
        if replay is not None:
            return Batch([], replay=replay)
    # Where copies are used (``transactions.copies``: the API's first attempt at a request) a
    # posting runs on the templates and accounts the process keeps, and one on the process's
    # copy of its ledger also on a kept connection, checked by its first statement. What it
    # finds stale raises ``kept.Stale`` before anything is written, and the view makes the
    # request again without copies: the engine makes nothing again itself.
    checks = first_statement_checks() if copies.on_copy(ledger) else contextlib.nullcontext()
    with checks:
        return _attempt(Run(ledger, requests, atomic), claim, copies.lookups_for(ledger), within)


def _attempt(
    run: Run, claim: idempotency.Claim | None, lookups: PostingLookups, within: Within | None
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
            run.make_conversion_accounts()
            run.lock()
            run.apply(skip=set(repeats))
            run.raise_first_refusal()
            run.settle_keys(repeats)
            outcomes = [o for o in run.outcomes if o is not None]
            assert len(outcomes) == len(requests)
            if within is not None:
                within(outcomes)
            if record is not None:
                idempotency.keep_outcome(record, [o.key_row() for o in outcomes])
    except IntegrityError as exc:
        if idempotency.is_conflict(exc):
            raise idempotency.running() from exc
        raise
    return Batch(outcomes, record=record)


def post(
    ledger: Ledger,
    request: PostingRequest,
    *,
    dry_run: bool = False,
    within: Within | None = None,
) -> Outcome:
    """Post one transaction (a batch of one): a 201 outcome or a replay; refusals raise."""
    if dry_run:
        return simulate(ledger, request)
    try:
        (outcome,) = _run(ledger, [request], atomic=True, within=within).outcomes
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
