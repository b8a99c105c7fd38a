"""Postings made later: scheduled postings (``scheduledFor``) and holds that commit themselves
(``commitAt``), and the scheduler that makes them when their time comes (``manage.py
post_scheduled``). docs/TIME.md has the states.

- Scheduling checks what can be checked now, as a posting does it (its template found and
  planned with its variables, its parent found, its pending options); its accounts, funds,
  limits and period are checked when it posts. The request is kept on a ``ScheduledPosting``
  row (``SCHEDULED``), with its event, and answered 202. An idempotency key works as on any posting.
- A cancel takes the row's lock: ``SCHEDULED`` -> ``CANCELED``.
- The scheduler posts each due row through the engine (``engine.post``), as the actor who
  scheduled it, effective at ``scheduledFor``. Inside the posting's database transaction, once
  its writes are made, the row is locked and must still be ``SCHEDULED``: it becomes
  ``POSTED``, naming the transaction, in the same COMMIT. So a row posts once, whatever number of
  schedulers run, and a cancel that took the row first leaves nothing posted. A refusal (funds,
  limits, a closed period, a template deleted since) makes it ``FAILED`` with the error.
- A due hold is committed in full through ``states.commit_due`` (the one commit), effective at
  its ``commitAt``. A refused commit leaves the hold pending, clears its ``commitAt`` (so that it
  is not tried again and again) and records the event ``transaction.commit_failed`` with why.
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from instruments.conversion import RateTerms
from ledgerproject import actors
from ledgerproject.errors import ErrorCode, LedgerError
from organizations.locking import lock_ledger_active
from organizations.models import Ledger
from organizations.services import ensure_ledger_active
from outbox import events
from templates_dsl.formatter import format_template
from templates_dsl.inline import template_from_text
from transactions import copies, engine, idempotency, states
from transactions.lookups import PostingLookups
from transactions.models import ScheduledPosting, Transaction
from transactions.prepare import Outcome, PostingRequest, commit_time_of, expiry_of

log = logging.getLogger(__name__)

# How long a scheduler keeps a due row to itself before another may take it up: far longer than
# a posting takes, so that only a scheduler that died leaves its rows to the others.
LEASE = dt.timedelta(minutes=5)
ACCEPTED = 202
# The actions of a scheduled posting's events (``scheduled_posting.<action>``).
ON_CANCELED, ON_POSTED, ON_FAILED = "canceled", "posted", "failed"


def _bad(field: str, problem: str, message: str) -> LedgerError:
    return LedgerError(ErrorCode.BAD_REQUEST, message, fields={field: problem})


def _check(ledger: Ledger, request: PostingRequest, scheduled_for: dt.datetime) -> None:
    """What a scheduled posting can be refused for when it is asked for (400, 404, 422)."""
    if scheduled_for <= timezone.now():
        raise _bad("scheduledFor", "not in the future", "scheduledFor must be in the future.")
    if request.effective_at is not None:
        raise _bad(
            "effectiveAt",
            "not with scheduledFor",
            "A scheduled posting takes effect when it is due (scheduledFor): it takes no "
            "effectiveAt.",
        )
    lookups = PostingLookups(ledger)
    # A conversion's rate is the one in force when it posts; one must be in force now.
    _, plan = lookups.plan(
        request.template_code, request.variables, request.inline, terms=request.rate
    )
    lookups.check_parent(request.parent_id)
    pending = plan.pending if request.pending is None else request.pending
    expiry_of(request, plan, pending=pending)
    commit_time_of(request, pending=pending, expires_at=request.expires_at)
    # Those sent: a template's hold duration counts from the posting, whenever it is made.
    for name, at in (("expiresAt", request.expires_at), ("commitAt", request.commit_at)):
        if at is not None and at <= scheduled_for:
            raise _bad(name, "not after scheduledFor", f"{name} must be after scheduledFor.")


@dataclass
class Answer:
    """A scheduling request's answer: its status, body, and whether it replays a key's."""

    status: int
    body: Any
    replayed: bool = False


def schedule(ledger: Ledger, request: PostingRequest, scheduled_for: dt.datetime) -> Answer:
    """Keep ``request`` to be posted at ``scheduled_for`` (or replay its key's answer)."""
    ensure_ledger_active(ledger)
    claim = request.claim
    if claim is not None:
        replay = idempotency.replay_of(claim, idempotency.answered(ledger, [claim]).get(claim.key))
        if replay is not None:
            return Answer(replay.response_status, replay.response_body, True)
    _check(ledger, request, scheduled_for)
    with transaction.atomic(durable=True):
        # A request may run on the process's copies of its token and ledger: confirmed before
        # anything is written (``copies.CopyChanged`` makes the view ask again without them).
        copies.confirm_now(ledger)
        lock_ledger_active(ledger)
        record = None
        if claim is not None:
            taken = idempotency.take(ledger, [idempotency.Stored(claim, ACCEPTED)])
            if claim.key in taken.busy:
                raise idempotency.running()
            replay = idempotency.replay_of(claim, taken.stored.get(claim.key))
            if replay is not None:
                return Answer(replay.response_status, replay.response_body, True)
            record = taken.mine[claim.key]
        row = ScheduledPosting.objects.create(
            organization_id=ledger.organization_id,
            ledger_id=ledger.pk,
            scheduled_for=scheduled_for,
            template_code=request.template_code if request.inline is None else "",
            dsl=format_template(request.inline) if request.inline is not None else "",
            variables=dict(request.variables),
            metadata=dict(request.metadata or {}),
            description=request.description,
            pending=request.pending,
            parent_id=request.parent_id,
            expires_at=request.expires_at,
            commit_at=request.commit_at,
            rate=request.rate.as_json() if request.rate is not None else None,
            **actors.stamp(),
        )
        body = events.rendering(events.record(row, events.CREATED))
        if record is not None:  # recorded with the row: a replay never renders it again
            idempotency.keep_answer(ledger, record, body)
    return Answer(ACCEPTED, body)


def _locked(organization_id: uuid.UUID, ledger_id: uuid.UUID, pk: Any) -> ScheduledPosting:
    row = (
        ScheduledPosting.objects.filter(organization_id=organization_id, ledger_id=ledger_id, pk=pk)
        .select_for_update(of=("self",))
        .first()
    )
    if row is None:
        raise LedgerError(ErrorCode.NOT_FOUND, "The scheduled posting was not found.")
    return row


def _settle(row: ScheduledPosting, status: str, event: str, **values: Any) -> ScheduledPosting:
    """Save the row's new status (and what it names) with its event."""
    row.status, row.claimed_until = status, None
    for name, value in values.items():
        setattr(row, name, value)
    row.save(update_fields=["status", "claimed_until", "updated_at", *values])
    return events.record(row, event)


def cancel(ledger: Ledger, scheduled_id: uuid.UUID) -> ScheduledPosting:
    """``SCHEDULED`` -> ``CANCELED``; anything else is 422 0099."""
    with transaction.atomic(durable=True):
        lock_ledger_active(ledger)
        row = _locked(ledger.organization_id, ledger.pk, scheduled_id)
        if row.status != ScheduledPosting.SCHEDULED:
            raise LedgerError(
                ErrorCode.INVALID_TRANSACTION_STATUS,
                f"Only a SCHEDULED posting can be canceled; this one is {row.status}.",
            )
        return _settle(row, ScheduledPosting.CANCELED, ON_CANCELED)


def request_of(row: ScheduledPosting) -> PostingRequest:
    """The posting a row asks for, effective when it is due."""
    return PostingRequest(
        template_code=row.template_code,
        variables=row.variables,
        metadata=row.metadata,
        description=row.description,
        pending=row.pending,
        parent_id=row.parent_id,
        expires_at=row.expires_at,
        commit_at=row.commit_at,
        rate=RateTerms.from_json(row.rate),
        inline=template_from_text(row.dsl) if row.dsl else None,
        effective_at=row.scheduled_for,
    )


class _Done(Exception):
    """The row was no longer ``SCHEDULED`` once locked: the posting is rolled back."""


def _mark_posted(row: ScheduledPosting, outcomes: list[Outcome]) -> None:
    """Inside the posting's database transaction, after its writes: the row, locked, becomes
    ``POSTED`` with the transaction, or (no longer ``SCHEDULED``) the posting is undone."""
    locked = _locked(row.organization_id, row.ledger_id, row.pk)
    if locked.status != ScheduledPosting.SCHEDULED:
        raise _Done
    (outcome,) = outcomes
    _settle(locked, ScheduledPosting.POSTED, ON_POSTED, transaction=outcome.transaction)


def _mark_failed(row: ScheduledPosting, error: LedgerError) -> bool:
    with transaction.atomic(durable=True):
        locked = _locked(row.organization_id, row.ledger_id, row.pk)
        if locked.status != ScheduledPosting.SCHEDULED:
            return False
        _settle(locked, ScheduledPosting.FAILED, ON_FAILED, error=error.as_body())
        return True


def _claimed(row: ScheduledPosting, now: dt.datetime) -> bool:
    """Take the row for ``LEASE``, unless another scheduler holds it."""
    taken = (
        ScheduledPosting.objects.filter(
            organization_id=row.organization_id, pk=row.pk, status=ScheduledPosting.SCHEDULED
        )
        .filter(Q(claimed_until__isnull=True) | Q(claimed_until__lte=now))
        .update(claimed_until=now + LEASE)
    )
    return taken == 1


def _release(row: ScheduledPosting) -> None:
    ScheduledPosting.objects.filter(organization_id=row.organization_id, pk=row.pk).update(
        claimed_until=None
    )


def _post(row: ScheduledPosting, ledger: Ledger) -> str | None:
    """Post one claimed row; answer its new status (``POSTED``, ``FAILED``), or None (left for
    later, or done by another)."""
    try:
        with actors.working(actors.work_of(row)):
            engine.post(ledger, request_of(row), within=functools.partial(_mark_posted, row))
    except _Done:
        return None
    except LedgerError as error:
        if error.http_status == 409:  # a conflict of the moment (0084, 0125): try again later
            _release(row)
            return None
        with actors.working(actors.work_of(row)):
            return ScheduledPosting.FAILED if _mark_failed(row, error) else None
    return ScheduledPosting.POSTED


@dataclass
class Pass:
    """What one pass of the scheduler did."""

    posted: int = 0
    failed: int = 0
    committed: int = 0
    commits_refused: int = 0

    def add(self, other: Pass) -> None:
        self.posted += other.posted
        self.failed += other.failed
        self.committed += other.committed
        self.commits_refused += other.commits_refused

    def __bool__(self) -> bool:
        return bool(self.posted or self.failed or self.committed or self.commits_refused)

    def __str__(self) -> str:
        return (
            f"{self.posted} posted, {self.failed} failed, {self.committed} holds committed, "
            f"{self.commits_refused} commits refused"
        )


def _ledgers(ids: Iterable[uuid.UUID]) -> dict[Any, Ledger]:
    return Ledger.objects.in_bulk(set(ids))


def post_due(
    *, limit: int = 100, now: dt.datetime | None = None, stopping: Callable[[], bool] = bool
) -> Pass:
    """One pass: up to ``limit`` due scheduled postings posted, and as many due holds
    committed; ``stopping()`` true ends it before the next of them."""
    now = now or timezone.now()
    done = Pass()
    due = list(
        ScheduledPosting.objects.filter(status=ScheduledPosting.SCHEDULED, scheduled_for__lte=now)
        .filter(Q(claimed_until__isnull=True) | Q(claimed_until__lte=now))
        .order_by("scheduled_for", "id")[:limit]
    )
    ledgers = _ledgers(row.ledger_id for row in due)
    for row in due:
        if stopping():
            return done
        if not _claimed(row, now):
            continue
        result = _unless_it_breaks(_post, row, ledgers[row.ledger_id])
        done.posted += result == ScheduledPosting.POSTED
        done.failed += result == ScheduledPosting.FAILED
    holds = list(
        Transaction.objects.filter(
            status=Transaction.PRE_APPROVED,
            commit_at__isnull=False,
            commit_at__lte=now,
            ledger__deleted_at__isnull=True,
        )
        .order_by("commit_at", "id")
        .values_list("id", "ledger_id")[:limit]
    )
    ledgers = _ledgers(ledger_id for _, ledger_id in holds)
    for tx_id, ledger_id in holds:
        if stopping():
            return done
        result = _unless_it_breaks(_commit, ledgers[ledger_id], tx_id, now)
        done.committed += result == COMMITTED
        done.commits_refused += result == COMMIT_REFUSED
    return done


# What became of a due hold.
COMMITTED, COMMIT_REFUSED = "committed", "commit refused"


def _unless_it_breaks(work: Callable[..., str | None], *args: Any) -> str | None:
    """One row's work; an error that is not a refusal (the database gone a moment, a fault) is
    logged and leaves the row to a later pass (a scheduled posting once its lease ends), so
    that it does not stop the others or the scheduler."""
    try:
        return work(*args)
    except Exception:  # any error of one row, logged whole
        log.exception("the scheduler left %s for a later pass", args[0])
        return None


def _commit(ledger: Ledger, tx_id: uuid.UUID, now: dt.datetime) -> str | None:
    try:
        return (
            COMMITTED if states.commit_due(ledger=ledger, transaction_id=tx_id, now=now) else None
        )
    except LedgerError as error:
        if error.http_status == 409:
            return None
        refused = states.commit_refused(ledger=ledger, transaction_id=tx_id, error=error)
        if refused:
            log.warning("hold %s did not commit itself: %s", tx_id, error.description)
        return COMMIT_REFUSED if refused else None
