"""What a posting is before it touches a lock: the request an entry point parsed, its outcome,
and the transaction and legs prepared from its template, variables and accounts."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.utils import timezone

from instruments.conversion import RateTerms
from ledgerproject import actors
from ledgerproject.errors import ErrorCode, LedgerError
from ledgerproject.formats import render_timestamp
from ledgerproject.metadata import validate_metadata
from organizations.models import Account, Ledger
from organizations.periods import check_open
from templates_dsl.ast import Template
from templates_dsl.models import TransactionTemplate
from templates_dsl.planner import PostingPlan
from transactions import idempotency
from transactions.guards import check_account, check_conversion_account
from transactions.lookups import PostingLookups
from transactions.models import IdempotencyKey, Operation, Transaction
from transactions.money import CREDIT, DEBIT, Leg, Step


@dataclass
class PostingRequest:
    """One posting as an entry point parsed it.
    ``inline``: the checked template the request carried, posted with no stored template."""

    template_code: str = ""
    variables: Mapping[str, Any] = field(default_factory=dict)
    metadata: Mapping[str, Any] | None = None
    description: str | None = None
    pending: bool | None = None
    parent_id: uuid.UUID | None = None
    expires_at: dt.datetime | None = None
    claim: idempotency.Claim | None = None
    inline: Template | None = None
    # When the money moved (``effectiveAt``); None: when it is posted.
    effective_at: dt.datetime | None = None
    # A pending posting commits itself then (``commitAt``), by the scheduler.
    commit_at: dt.datetime | None = None
    # What the client asks of the rate of a template that converts (``rate``).
    rate: RateTerms | None = None


@dataclass
class Outcome:
    """What became of one posting: a transaction, a refusal, or a stored answer replayed."""

    status: int
    transaction: Transaction | None = None
    error: LedgerError | None = None
    replay: IdempotencyKey | None = None
    record: IdempotencyKey | None = None  # the key row written with it, awaiting its answer
    # The transaction as the API renders it, when the engine already rendered it (the data of
    # its ``transaction.posted`` event): the answer reuses it instead of rendering again.
    rendered: Any = None

    @property
    def ok(self) -> bool:
        return self.status < 400

    def key_row(self) -> dict[str, Any]:
        """What a batch key replays from if its rendered answer was never recorded."""
        if self.error is not None:
            return {"status": self.status, "error": self.error.as_body()}
        tx = self.transaction or (self.replay.transaction if self.replay else None)
        return {"status": self.status, "transactionId": str(tx.pk) if tx else None}


@dataclass
class Batch:
    """A batch's outcomes in order, or the stored answer of the batch's own key."""

    outcomes: list[Outcome]
    replay: IdempotencyKey | None = None
    record: IdempotencyKey | None = None


class ItemRefused(Exception):
    def __init__(self, index: int, error: LedgerError) -> None:
        self.index, self.error = index, error
        super().__init__(f"item {index}: {error}")


def item_error(index: int, error: LedgerError) -> LedgerError:
    """An item's refusal as the refusal of the whole batch: ``fields.index`` added."""
    fields = {"index": str(index)}
    fields.update({f"transactions[{index}].{k}": v for k, v in (error.fields or {}).items()})
    return LedgerError(error.error, f"transactions[{index}]: {error.description}", fields=fields)


@dataclass
class Prepared:
    transaction: Transaction
    legs: list[Leg]
    effective_at: dt.datetime | None = None  # as sent; None: when it is posted (``stamp_posted``)


def prepare(
    ledger: Ledger,
    lookups: PostingLookups,
    request: PostingRequest,
    planned: tuple[TransactionTemplate | None, PostingPlan],
    tx_id: uuid.UUID | None = None,
) -> Prepared:
    """The transaction and legs of a planned posting; its parent and accounts checked. An
    inline posting has no template and an empty ``type`` (rendered ``null``). ``tx_id``: the
    transaction's id when the caller chose it (else a new one)."""
    template, plan = planned
    lookups.check_parent(request.parent_id)
    accounts = lookups.resolve_accounts(leg.alias for leg in plan.legs)
    legs = []
    converts = plan.conversion is not None
    for leg in plan.legs:
        account = accounts[leg.alias]
        if converts and leg.alias.startswith(Account.CONVERSION_PREFIX):
            check_conversion_account(account)
        check_account(account, leg.direction, leg.asset)
        legs.append(
            Leg(
                account.pk,
                account.alias,
                account.portfolio_id,
                leg.direction,
                leg.amount,
                leg.description,
                leg.chart_of_accounts,
                # A conversion's legs name their assets; a plain posting's are its own.
                asset_code=leg.asset if converts else None,
                scale=leg.scale if converts else None,
            )
        )
    pending = plan.pending if request.pending is None else request.pending
    expires_at = expiry_of(request, plan, pending=pending)
    tx = Transaction(
        **({} if tx_id is None else {"id": tx_id}),
        expires_at=expires_at,
        commit_at=commit_time_of(request, pending=pending, expires_at=expires_at),
        organization_id=ledger.organization_id,
        ledger_id=ledger.pk,
        parent_id=request.parent_id,
        template_id=None if template is None else template.pk,
        type=template.code if template is not None else "",
        description=plan.description if request.description is None else request.description,
        status=Transaction.PRE_APPROVED if pending else Transaction.SENT,
        amount=plan.total,
        scale=plan.scale,
        asset_code=plan.asset,
        chart_of_accounts_group_name=plan.group_name,
        source=list(dict.fromkeys(leg.alias for leg in legs if leg.direction == DEBIT)),
        destination=list(dict.fromkeys(leg.alias for leg in legs if leg.direction == CREDIT)),
        metadata={**plan.metadata, **validate_metadata(dict(request.metadata or {}))},
        legs=[leg.as_json() for leg in legs],
        conversion=plan.conversion,
        **actors.stamp(),
    )
    return Prepared(tx, legs, checked_effective_at(request.effective_at, ledger))


def expiry_of(request: PostingRequest, plan: PostingPlan, *, pending: bool) -> dt.datetime | None:
    """``expiresAt``: only on a pending transaction, and in the future; else a pending
    transaction's template's ``(hold-duration)`` from now; else none."""
    if request.expires_at is None:
        if pending and plan.hold_duration is not None:
            return timezone.now() + dt.timedelta(seconds=plan.hold_duration)
        return None
    if not pending:
        raise LedgerError(
            ErrorCode.BAD_REQUEST,
            "expiresAt is only for pending transactions (pending: true).",
            fields={"expiresAt": "the transaction is not pending"},
        )
    if request.expires_at <= timezone.now():
        raise LedgerError(
            ErrorCode.BAD_REQUEST,
            "expiresAt must be in the future.",
            fields={"expiresAt": "in the past"},
        )
    return request.expires_at


def commit_time_of(
    request: PostingRequest, *, pending: bool, expires_at: dt.datetime | None
) -> dt.datetime | None:
    """``commitAt``: only on a pending transaction, after it takes effect (in the future, for
    one that takes effect now), and before it expires. A hold that took effect earlier may
    name a time passed since: the scheduler's next pass commits it, effective then."""
    at = request.commit_at
    if at is None:
        return None
    problem = (
        "the transaction is not pending" if not pending
        else "in the past" if at <= (request.effective_at or timezone.now())
        else "not before expiresAt" if expires_at is not None and at >= expires_at
        else None
    )  # fmt: skip
    if problem is not None:
        raise LedgerError(
            ErrorCode.BAD_REQUEST,
            "commitAt must be a future time before the hold expires, on a pending transaction "
            f"(pending: true): {problem}.",
            fields={"commitAt": problem},
        )
    return at


def checked_effective_at(
    value: dt.datetime | None, ledger: Ledger, *, not_before: Transaction | None = None
) -> dt.datetime | None:
    """An ``effectiveAt`` a client sent: not in the future (the ledger records what happened),
    not in the ledger's closed period (checked again when written: ``guards.Guard``), and for a
    commit, cancel or revert (``not_before``: the transaction it acts on) not before that
    transaction took effect. None stays None: effective when written."""
    if value is None:
        return None
    check_open(ledger, value)
    if value > timezone.now():
        raise LedgerError(
            ErrorCode.BAD_REQUEST,
            "effectiveAt must not be in the future.",
            fields={"effectiveAt": "in the future"},
        )
    # To the second: the API answers times to the second, and a client may send one back;
    # within the original's second, the original's own time is meant.
    if not_before is not None and value < not_before.effective_at:
        if value >= not_before.effective_at.replace(microsecond=0):
            return not_before.effective_at
        raise LedgerError(
            ErrorCode.BAD_REQUEST,
            "effectiveAt must not be before the transaction's own effectiveAt "
            f"({render_timestamp(not_before.effective_at)}).",
            fields={"effectiveAt": "before the transaction's own"},
        )
    return value.astimezone(dt.UTC)


def stamp_posted(
    tx: Transaction, now: dt.datetime, effective_at: dt.datetime | None
) -> dt.datetime:
    """The posting's time (once its locks are held, so that an account's operations are in time
    order as they are in version order), and its effective time: ``effective_at``, or then."""
    tx.created_at = tx.updated_at = now
    tx.effective_at = effective_at or now
    return now


def opening_steps(tx: Transaction, legs: list[Leg]) -> list[Step]:
    """A plain posting moves every leg; a pending one only holds the sources."""
    if tx.status == Transaction.PRE_APPROVED:
        return [(leg, Operation.HOLD) for leg in legs if leg.direction == DEBIT]
    return [(leg, Operation.POST) for leg in legs]


def balances_of(steps: list[Step]) -> list[uuid.UUID]:
    """The accounts whose balances these steps move."""
    return [leg.account_id for leg, _ in steps]


def attach_operations(tx: Transaction, operations: list[Operation]) -> Transaction:
    """Keep the operations a posting made on its transaction, for its rendering."""
    tx.made_operations = operations
    return tx


def with_operations(tx: Transaction) -> Transaction:
    """A stored transaction with its operations read, in order, for its rendering."""
    operations = Operation.objects.filter(
        organization_id=tx.organization_id, transaction_id=tx.pk
    ).order_by("created_at", "id")
    return attach_operations(tx, list(operations))
