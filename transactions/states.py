"""Commit, revert and cancel: the state machine of a transaction.

Each locks the ledger against its delete, then the transaction row (``FOR NO KEY UPDATE``, so of
two racing requests exactly one acts on a state), then the balances, and applies the same
balance book and guarded write as a posting.

- commit: PRE_APPROVED -> SENT; the sources' holds settle, the destinations are credited.
  With an amount (one source, one destination) only that much settles; the rest is released.
  Past the transaction's expiry a commit is refused, whether or not it was expired yet.
- cancel: PRE_APPROVED -> CANCELED; a new reverting transaction releases the holds.
- expire: a cancel (the same ``_cancel``) of a PRE_APPROVED transaction past its expiry, by
  ``expire_holds`` or, in the back office, by staff (``expire_now``).
- revert: SENT -> a new reverting transaction, every leg mirrored; PRE_APPROVED -> cancel.

``preview`` answers what one of them would write now, with the same checks and steps, nothing
locked or written (the back office's confirmation pages).
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable

from django.db import transaction
from django.utils import timezone

from ledgerproject import actors
from ledgerproject.errors import ErrorCode, LedgerError
from organizations.locking import lock_ledger_active
from organizations.models import Balance, Ledger
from organizations.services import ensure_ledger_active
from outbox import events
from transactions.guards import Guard, guard_refusal, instrument_missing
from transactions.locking import lock_balances, lock_transaction
from transactions.models import Operation, Transaction
from transactions.money import CREDIT, DEBIT, BalanceBook, Step, assets_of, legs_of
from transactions.partial import Amount, check_not_expired, commit_steps, is_expired
from transactions.prepare import (
    attach_operations,
    checked_effective_at,
    stamp_posted,
    with_operations,
)
from transactions.writes import write_posting


def _write(
    tx: Transaction, steps: list[Step], *, insert: bool, effective_at: dt.datetime | None
) -> Transaction:
    """Apply ``steps`` to the locked balances and write them (with ``tx`` when ``insert``),
    effective at ``effective_at`` (None: as they are written). A deleted instrument or account
    is answered before any other refusal."""
    touched = sorted({leg.account_id for leg, _ in steps})
    balances = lock_balances(tx.organization_id, touched)
    # Stamped now that the locks are held, so an account's operations are in time order as
    # they are in version order (what the balance as the ledger knew it relies on).
    if insert:
        stamp_posted(tx, timezone.now(), effective_at)
    else:
        tx.updated_at = timezone.now()
    effective_at = effective_at or tx.updated_at
    guard = Guard.of(tx, assets_of(tx, (leg for leg, _ in steps)), touched, effective_at)
    book = BalanceBook(balances, now=tx.updated_at, effective_at=effective_at)
    try:
        operations = book.apply_all(tx, steps)
    except LedgerError as error:
        raise guard_refusal(guard) or error from None
    written = write_posting(
        [tx] if insert else [], operations, [balances[a] for a in touched], guard=guard
    )
    if not written:
        raise guard_refusal(guard) or instrument_missing(tx.asset_code)
    return attach_operations(tx, operations)


def _recorded(tx: Transaction, event_type: str) -> Transaction:
    """The state change's event (the transaction the action answers with), in its database
    transaction: one INSERT."""
    events.build(event_type, tx).save(force_insert=True)
    return tx


def _locked(ledger: Ledger, transaction_id: uuid.UUID) -> Transaction:
    lock_ledger_active(ledger)
    return lock_transaction(ledger=ledger, transaction_id=transaction_id)


def _set_status(tx: Transaction, status: str) -> None:
    """Save the new status (and the amount, legs and description a partial commit rewrote) at
    the time its operations were written (``_write``)."""
    tx.status = status
    Transaction.objects.filter(organization_id=tx.organization_id, pk=tx.pk).update(
        status=tx.status,
        updated_at=tx.updated_at,
        amount=tx.amount,
        legs=tx.legs,
        description=tx.description,
    )


def commit(
    *,
    ledger: Ledger,
    transaction_id: uuid.UUID,
    amount: Amount | None = None,
    effective_at: dt.datetime | None = None,
) -> Transaction:
    """Commit a pending transaction, in full or (``amount``) in part (``partial.py``), effective
    at ``effective_at`` (by default when it is committed)."""
    with transaction.atomic(durable=True):
        return _commit_locked(ledger, _locked(ledger, transaction_id), amount, effective_at)


def commit_due(
    *, ledger: Ledger, transaction_id: uuid.UUID, now: dt.datetime
) -> Transaction | None:
    """Commit a hold in full, effective at its ``commitAt``, if it is still pending and due
    (``now``) once its row is held; None when there was nothing to do (``scheduling``)."""
    with transaction.atomic(durable=True):
        tx = _locked(ledger, transaction_id)
        if tx.status != Transaction.PRE_APPROVED or tx.commit_at is None or tx.commit_at > now:
            return None
        return _commit_locked(ledger, tx, None, tx.commit_at)


def commit_refused(*, ledger: Ledger, transaction_id: uuid.UUID, error: LedgerError) -> bool:
    """A hold's own commit was refused: it stays pending, with no ``commitAt`` left, and the
    event ``transaction.commit_failed`` says why. False when it was no longer due to commit
    itself once its row was held."""
    with transaction.atomic(durable=True):
        tx = _locked(ledger, transaction_id)
        if tx.status != Transaction.PRE_APPROVED or tx.commit_at is None:
            return False
        tx.commit_at, tx.updated_at = None, timezone.now()
        Transaction.objects.filter(organization_id=tx.organization_id, pk=tx.pk).update(
            commit_at=None, updated_at=tx.updated_at
        )
        data = {**events.rendering(with_operations(tx)), "error": error.as_body()}
        events.build(events.TRANSACTION_COMMIT_FAILED, tx, data).save(force_insert=True)
        return True


def _commit_locked(
    ledger: Ledger, tx: Transaction, amount: Amount | None, effective_at: dt.datetime | None
) -> Transaction:
    _check("commit", tx)
    effective_at = checked_effective_at(effective_at, ledger, not_before=tx)
    _, steps = _plan("commit", tx, amount)
    _write(tx, steps, insert=False, effective_at=effective_at)
    _set_status(tx, Transaction.SENT)
    return _recorded(with_operations(tx), events.TRANSACTION_COMMITTED)


def revert(
    *,
    ledger: Ledger,
    transaction_id: uuid.UUID,
    effective_at: dt.datetime | None = None,
    within: Callable[[Transaction], None] | None = None,
) -> Transaction:
    """A reversal effective at ``effective_at``: by default when it is made, whenever the
    original took effect. ``within`` is called with the reversal inside the revert's database
    transaction (an approval marks itself done there)."""
    with transaction.atomic(durable=True):
        tx = _locked(ledger, transaction_id)
        _check("revert", tx)
        effective_at = checked_effective_at(effective_at, ledger, not_before=tx)
        if _acts_as("revert", tx) == "cancel":
            reversal = _cancel_locked(tx, effective_at)
        else:
            reversal, steps = _plan("revert", tx)
            reversal = _write(reversal, steps, insert=True, effective_at=effective_at)
            reversal = _recorded(reversal, events.TRANSACTION_REVERTED)
        if within is not None:
            within(reversal)
        return reversal


def cancel(
    *, ledger: Ledger, transaction_id: uuid.UUID, effective_at: dt.datetime | None = None
) -> Transaction:
    reversal = _cancel(ledger, transaction_id, expired_by=None, effective_at=effective_at)
    assert reversal is not None
    return reversal


def expire(
    *, ledger: Ledger, transaction_id: uuid.UUID, now: dt.datetime | None = None
) -> Transaction | None:
    """Cancel the transaction if it is still PRE_APPROVED and its expiry has passed (``now``);
    None when there was nothing to do. A commit (or another worker) holding the row is waited
    for, so that exactly one of them acts: a commit that took the row first settles it, or is
    refused as expired, and then this cancel runs."""
    return _cancel(ledger, transaction_id, expired_by=now or timezone.now())


def _cancel(
    ledger: Ledger,
    transaction_id: uuid.UUID,
    *,
    expired_by: dt.datetime | None,
    effective_at: dt.datetime | None = None,
) -> Transaction | None:
    """The one cancel: by request (``expired_by`` None) or by expiry (nothing unless the
    transaction is still pending and past its expiry once its row is held). An expiry takes
    effect when it is made."""
    with transaction.atomic(durable=True):
        tx = _locked(ledger, transaction_id)
        if expired_by is not None and not is_expired(tx, expired_by):
            return None
        _check("cancel", tx)
        effective_at = checked_effective_at(effective_at, ledger, not_before=tx)
        return _cancel_locked(tx, effective_at)


NOT_EXPIRED = "Only a PRE_APPROVED transaction past its expiry can be expired."


def expire_now(*, ledger: Ledger, transaction_id: uuid.UUID) -> Transaction:
    """The back office's expire: the expiry's cancel run now rather than by ``expire_holds``;
    refused unless the transaction is a hold past its expiry."""
    reversal = expire(ledger=ledger, transaction_id=transaction_id)
    if reversal is None:
        raise LedgerError(ErrorCode.INVALID_TRANSACTION_STATUS, NOT_EXPIRED)
    return reversal


ACTIONS: dict[str, Callable[..., Transaction]] = {
    "commit": commit,
    "revert": revert,
    "cancel": cancel,
    "expire": expire_now,
}
"""The actions by name, for every entry point that offers them (API, admin)."""


def _check(verb: str, tx: Transaction) -> None:
    """Whether ``tx``'s state lets ``verb`` act on it (the amount and the books are checked
    with the steps)."""
    if verb == "commit":
        if tx.status != Transaction.PRE_APPROVED:
            raise LedgerError(
                ErrorCode.INVALID_TRANSACTION_STATUS,
                f"Only a PRE_APPROVED transaction can be committed; this one is {tx.status}.",
            )
        check_not_expired(tx, timezone.now())
        return
    if verb == "expire" and not is_expired(tx, timezone.now()):
        raise LedgerError(ErrorCode.INVALID_TRANSACTION_STATUS, NOT_EXPIRED)
    _check_revertible(tx)
    if verb == "cancel" and tx.status != Transaction.PRE_APPROVED:
        raise LedgerError(
            ErrorCode.INVALID_TRANSACTION_STATUS,
            f"Only a PRE_APPROVED transaction can be canceled; this one is {tx.status}.",
        )


def _acts_as(verb: str, tx: Transaction) -> str:
    """The action ``verb`` is on ``tx``: a revert of a pending transaction is its cancel, and
    so is an expiry."""
    if verb == "expire" or (verb == "revert" and tx.status == Transaction.PRE_APPROVED):
        return "cancel"
    return verb


def _plan(
    verb: str, tx: Transaction, amount: Amount | None = None
) -> tuple[Transaction, list[Step]]:
    """What ``verb`` writes for ``tx`` once checked: the transaction its operations belong to
    (``tx`` for a commit, a new reverting one otherwise) and their steps."""
    acts_as = _acts_as(verb, tx)
    if acts_as == "commit":
        return tx, commit_steps(tx, amount)
    if acts_as == "cancel":
        releases = [
            (leg.towards(CREDIT), Operation.RELEASE)
            for leg in legs_of(tx)
            if leg.direction == DEBIT
        ]
        return _reversal_of(tx, CANCELLATION), releases
    if acts_as != "revert":
        raise ValueError(f"no action {verb!r}")
    return _reversal_of(tx, REVERSAL), [(leg.mirrored(), Operation.POST) for leg in legs_of(tx)]


def preview(
    verb: str, *, ledger: Ledger, transaction_id: uuid.UUID, amount: Amount | None = None
) -> Transaction:
    """What ``verb`` (commit, revert, cancel or expire) would write now, effective now: the
    transaction carrying its operations, each with its balance before and after; refused as
    the action would be, with the same checks in the same order (the guard's refusal first, as in
    ``_write``). Nothing is written and no row is held, so the books may differ when the
    action runs, and it checks everything again."""
    ensure_ledger_active(ledger)
    tx = Transaction.objects.filter(
        organization_id=ledger.organization_id, pk=transaction_id, ledger_id=ledger.pk
    ).first()
    if tx is None:
        raise LedgerError(ErrorCode.NOT_FOUND, "The transaction was not found.")
    _check(verb, tx)
    target, steps = _plan(verb, tx, amount)
    now = timezone.now()
    if target is not tx:
        stamp_posted(target, now, None)
    touched = sorted({leg.account_id for leg, _ in steps})
    guard = Guard.of(target, assets_of(target, (leg for leg, _ in steps)), touched, now)
    balances = Balance.objects.filter(organization_id=tx.organization_id, account_id__in=touched)
    book = BalanceBook({b.account_id: b for b in balances}, now=now, effective_at=now)
    try:
        operations = book.apply_all(target, steps)
    except LedgerError as error:
        raise guard_refusal(guard) or error from None
    refusal = guard_refusal(guard)
    if refusal is not None:
        raise refusal
    return attach_operations(target, operations)


def _check_revertible(tx: Transaction) -> None:
    if tx.is_reversal:
        raise LedgerError(
            ErrorCode.ALREADY_A_REVERSAL, "A reverting transaction cannot be reverted."
        )
    if tx.status == Transaction.CANCELED:
        raise LedgerError(
            ErrorCode.INVALID_TRANSACTION_STATUS, "A CANCELED transaction cannot be reverted."
        )
    if Transaction.objects.filter(parent_id=tx.pk, is_reversal=True).exists():
        raise LedgerError(ErrorCode.REVERT_ALREADY_EXISTS, "This transaction was already reverted.")
    if tx.status not in (Transaction.SENT, Transaction.PRE_APPROVED):
        raise LedgerError(
            ErrorCode.INVALID_TRANSACTION_STATUS, f"A {tx.status} transaction cannot be reverted."
        )


REVERSAL, CANCELLATION = "Reversal", "Cancellation"


def _reversal_of(tx: Transaction, kind: str) -> Transaction:
    """The reverting transaction of ``tx``: a reversal (the money goes back) or a cancellation
    (the holds are released). Its description says which and of what, not the original's text,
    which describes money going the other way."""
    return Transaction(
        organization_id=tx.organization_id,
        ledger_id=tx.ledger_id,
        parent_id=tx.pk,
        is_reversal=True,
        template_id=tx.template_id,
        type=tx.type,
        description=f"{kind} of {tx.description or f'transaction {tx.pk}'}",
        status=Transaction.SENT,
        amount=tx.amount,
        scale=tx.scale,
        asset_code=tx.asset_code,
        chart_of_accounts_group_name=tx.chart_of_accounts_group_name,
        source=list(tx.destination),
        destination=list(tx.source),
        metadata=dict(tx.metadata),
        legs=[leg.mirrored().as_json() for leg in legs_of(tx)],
        # A conversion goes back at the rate it was made at: its legs' own amounts.
        conversion=tx.conversion,
        **actors.stamp(),
    )


def _cancel_locked(tx: Transaction, effective_at: dt.datetime | None) -> Transaction:
    reversal, releases = _plan("cancel", tx)
    reversal = _write(reversal, releases, insert=True, effective_at=effective_at)
    tx.status, tx.updated_at = Transaction.CANCELED, reversal.updated_at
    # At the cancellation's own time, as its event implies for the original (the journal,
    # docs/BOOKS.md): save() would stamp updated_at anew.
    Transaction.objects.filter(organization_id=tx.organization_id, pk=tx.pk).update(
        status=tx.status, updated_at=tx.updated_at
    )
    return _recorded(reversal, events.TRANSACTION_CANCELED)
