"""What a commit settles: the whole hold, or (a partial commit) a smaller amount, the rest
released; and whether a hold has expired.

A partial commit is allowed for a transaction with exactly one source and one destination: the
source settles the amount and releases the rest of its hold, the destination is credited the
amount. With several sources or destinations the split of a smaller amount is ambiguous (which
source pays less?), so it is refused rather than guessed; so is a part of a conversion."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace

from ledgerproject.amounts import format_amount
from ledgerproject.errors import ErrorCode, LedgerError
from ledgerproject.formats import render_timestamp
from transactions.models import Operation, Transaction
from transactions.money import CREDIT, DEBIT, Step, legs_of


@dataclass(frozen=True)
class Amount:
    """An amount as a request names it: an integer at a scale (None: the transaction's)."""

    value: int
    scale: int | None = None


def is_expired(tx: Transaction, now: dt.datetime) -> bool:
    return (
        tx.status == Transaction.PRE_APPROVED
        and tx.expires_at is not None
        and (tx.expires_at <= now)
    )


def check_not_expired(tx: Transaction, now: dt.datetime) -> None:
    """A commit after the expiry is refused even if the worker has not canceled it yet."""
    if is_expired(tx, now):
        raise LedgerError(
            ErrorCode.INVALID_TRANSACTION_STATUS,
            f"The hold of this transaction expired at {render_timestamp(tx.expires_at)}; it "
            "can no longer be committed (expire_holds cancels it, or cancel it now).",
        )


def _at_scale(amount: Amount, tx: Transaction) -> int:
    """The amount at the transaction's scale, exactly, or the refusal."""
    scale = tx.scale if amount.scale is None else amount.scale
    if scale <= tx.scale:
        return amount.value * 10 ** (tx.scale - scale)
    factor = 10 ** (scale - tx.scale)
    if amount.value % factor:
        raise LedgerError(
            ErrorCode.BAD_REQUEST,
            f"The amount has more decimal places than the transaction (scale {tx.scale}).",
            fields={"amount": f"not exact at scale {tx.scale}"},
        )
    return amount.value // factor


def partial_description(tx: Transaction, committed: int) -> str:
    """What a partial commit of ``committed`` (at the transaction's scale) settled, out of the
    amount held, then the original text: that text names the amount held, not the one sent."""
    settled = format_amount(committed, tx.scale, tx.asset_code)
    held = format_amount(tx.amount, tx.scale, tx.asset_code)
    said = f"Partial commit of {settled} of {held}"
    return f"{said}: {tx.description}" if tx.description else said


def commit_steps(tx: Transaction, amount: Amount | None) -> list[Step]:
    """The steps of a commit. A partial one also rewrites ``tx.amount`` and ``tx.legs`` to what
    was committed (what a later revert mirrors), and ``tx.description`` to say so; the caller
    saves them."""
    legs = legs_of(tx)
    value = tx.amount if amount is None else _at_scale(amount, tx)
    if not 0 < value <= tx.amount:
        raise LedgerError(
            ErrorCode.ACTION_NOT_PERMITTED,
            f"A commit may settle more than zero and at most the amount held, "
            f"{format_amount(tx.amount, tx.scale, tx.asset_code)}.",
            fields={"amount": "out of range"},
        )
    if value == tx.amount:
        return [
            (leg, Operation.SETTLE if leg.direction == DEBIT else Operation.POST) for leg in legs
        ]
    if tx.conversion is not None:
        raise LedgerError(
            ErrorCode.ACTION_NOT_PERMITTED,
            "A partial commit of a conversion is refused: its amounts were converted together, "
            "and a part converted again would round differently. Commit it in full, or cancel "
            "it and post the amount.",
            fields={"amount": "partial commit of a conversion"},
        )
    sources = [leg for leg in legs if leg.direction == DEBIT]
    destinations = [leg for leg in legs if leg.direction == CREDIT]
    if len(sources) != 1 or len(destinations) != 1:
        raise LedgerError(
            ErrorCode.ACTION_NOT_PERMITTED,
            "A partial commit needs exactly one source and one destination; this transaction "
            f"has {len(sources)} and {len(destinations)}, so how to split a smaller amount is "
            "ambiguous. Commit it in full, or cancel it and post the amount.",
            fields={"amount": "partial commit of a split transaction"},
        )
    (source,), (destination,) = sources, destinations
    rest = tx.amount - value
    settled = replace(source, amount=value)
    credited = replace(destination, amount=value)
    tx.description = partial_description(tx, value)
    tx.amount = value
    tx.legs = [settled.as_json(), credited.as_json()]
    released = replace(source, amount=rest).towards(CREDIT)
    return [
        (settled, Operation.SETTLE),
        (released, Operation.RELEASE),
        (credited, Operation.POST),
    ]
