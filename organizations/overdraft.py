"""Overdraft limits: how far below zero an account's available balance may go.

The limit lives on the balance row, at the balance's own scale, so that the database check
(``available >= -overdraft_limit``) and the balance book compare two integers of one scale:
exactly. A limit keeps the scale it was given: one at a larger scale than the balance's raises
the balance's scale (an exact rescaling of available and onHold, not a change of value), as a
posting at that scale would; one at a smaller scale is rescaled up to the balance's. So a limit
of 25.00 sent as 2500 at scale 2 is answered as 2500 at scale 2, never as 25 at scale 0.
External accounts have no limit: they are unbounded."""

from __future__ import annotations

from django.db import transaction

from ledgerproject.amounts import format_amount, in_range, rescale
from ledgerproject.errors import ErrorCode, LedgerError
from organizations.models import Account, Balance

MAX_SCALE = 18


def overdraft_set(*, account: Account, amount: int | None, scale: int | None) -> Balance:
    """Set the account's limit to ``amount`` at ``scale``; refused when the balance is already
    further below zero than the new limit allows. Locks the balance row (as a posting does)."""
    if account.is_external:
        raise LedgerError(
            ErrorCode.EXTERNAL_ACCOUNT_MODIFICATION,
            "External accounts have no overdraft limit: they are unbounded.",
        )
    if (
        amount is None
        or scale is None
        or amount < 0
        or not in_range(amount)
        or not (0 <= scale <= MAX_SCALE)
    ):
        raise LedgerError(
            ErrorCode.BAD_REQUEST,
            "overdraftLimit must be a non-negative amount with a scale from 0 to 18.",
            fields={"overdraftLimit": "a non-negative amount, scale 0 to 18"},
        )
    with transaction.atomic():
        balance = Balance.objects.select_for_update().get(
            organization_id=account.organization_id, account_id=account.pk
        )
        top = max(scale, balance.scale)
        available = rescale(balance.available, balance.scale, top)
        on_hold = rescale(balance.on_hold, balance.scale, top)
        limit = rescale(amount, scale, top)
        if not (in_range(available) and in_range(on_hold) and in_range(limit)):
            raise LedgerError(
                ErrorCode.ACTION_NOT_PERMITTED,
                "The overdraft limit would exceed the largest amount the ledger can hold.",
                fields={"overdraftLimit": "too large"},
            )
        if available < -limit:
            raise LedgerError(
                ErrorCode.ACTION_NOT_PERMITTED,
                f"The overdraft limit of {account.alias} cannot be lowered to "
                f"{format_amount(limit, top, account.asset_code)}: the account is already "
                f"overdrawn by {format_amount(-available, top, account.asset_code)}.",
                fields={"overdraftLimit": "below the current overdraft"},
            )
        balance.available, balance.on_hold, balance.scale = available, on_hold, top
        balance.overdraft_limit = limit
        balance.save(update_fields=["available", "on_hold", "scale", "overdraft_limit",
                                    "updated_at"])  # fmt: skip
        return balance
