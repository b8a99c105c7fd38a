"""Scaled integers and the balance book.

An amount is an integer with a scale (``2500`` at scale 2 is 25.00), never a float. Values of
different scales are combined by rescaling exactly to the larger one; nothing is ever rounded.
The balance book applies the legs of a posting to balances held in memory, one operation per
leg, refusing what would overdraw an account or leave the 38-digit range."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ledgerproject.amounts import format_amount, in_range, rescale
from ledgerproject.errors import ErrorCode, LedgerError
from ledgerproject.formats import str_of
from organizations.models import Balance
from transactions.models import Operation, Transaction

DEBIT, CREDIT = Operation.DEBIT, Operation.CREDIT


def combine_scales(parts: Iterable[tuple[str, int, int]]) -> dict[str, tuple[int, int]]:
    """``(key, scale, value)`` parts -> ``{key: (sum at the largest scale, that scale)}``."""
    grouped: dict[str, list[tuple[int, int]]] = {}
    for key, scale, value in parts:
        grouped.setdefault(key, []).append((int(value), int(scale)))
    out = {}
    for key, items in grouped.items():
        top = max(scale for _, scale in items)
        out[key] = (sum(rescale(value, scale, top) for value, scale in items), top)
    return out


@dataclass(frozen=True)
class Leg:
    """One side of a posting on one account: the account, its direction and its amount, in
    the transaction's asset at its scale, or (a conversion's) in ``asset_code`` at ``scale``.
    Stored on the transaction (``legs``) so that commit and revert replay exactly what was
    posted."""

    account_id: uuid.UUID
    alias: str
    portfolio_id: uuid.UUID | None
    direction: str
    amount: int
    description: str
    chart_of_accounts: str
    asset_code: str | None = None
    scale: int | None = None

    def as_json(self) -> dict[str, Any]:
        data = {
            "accountId": str_of(self.account_id),
            "alias": self.alias,
            "portfolioId": str_of(self.portfolio_id) if self.portfolio_id else None,
            "direction": self.direction,
            "amount": self.amount,
            "description": self.description,
            "chartOfAccounts": self.chart_of_accounts,
        }
        if self.asset_code is not None:
            data.update(assetCode=self.asset_code, scale=self.scale)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Leg:
        return cls(
            account_id=uuid.UUID(data["accountId"]),
            alias=data["alias"],
            portfolio_id=uuid.UUID(data["portfolioId"]) if data.get("portfolioId") else None,
            direction=data["direction"],
            amount=int(data["amount"]),
            description=data.get("description", ""),
            chart_of_accounts=data.get("chartOfAccounts", ""),
            asset_code=data.get("assetCode"),
            scale=data.get("scale"),
        )

    def asset_of(self, tx: Transaction) -> tuple[str, int]:
        """The asset and scale of its amount."""
        if self.asset_code is None or self.scale is None:
            return tx.asset_code, tx.scale
        return self.asset_code, self.scale

    def towards(self, direction: str) -> Leg:
        return replace(self, direction=direction)

    def mirrored(self) -> Leg:
        return self.towards(CREDIT if self.direction == DEBIT else DEBIT)


def legs_of(tx: Transaction) -> list[Leg]:
    return [Leg.from_json(leg) for leg in tx.legs]


def assets_of(tx: Transaction, legs: Iterable[Leg]) -> list[str]:
    """The assets a transaction's legs move: its own, and a conversion's other one."""
    return list(dict.fromkeys([tx.asset_code, *(leg.asset_of(tx)[0] for leg in legs)]))


def change_of(direction: str, effect: str, amount: int) -> tuple[int, int]:
    """What an operation of ``amount`` does to its balance's (available, on hold): POST moves
    available (down for a DEBIT), HOLD moves available to on hold, SETTLE takes from on hold,
    RELEASE returns on hold to available."""
    if effect == Operation.POST:
        return (-amount if direction == DEBIT else amount), 0
    if effect == Operation.HOLD:
        return -amount, amount
    if effect == Operation.SETTLE:
        return 0, -amount
    if effect == Operation.RELEASE:
        return amount, -amount
    raise ValueError(f"no effect {effect!r}")


Step = tuple[Leg, str]
"""A leg and its effect on the balance: POST, HOLD, SETTLE or RELEASE."""


class BalanceBook:
    """Balances of one posting (or batch) in memory; each applied step yields one operation."""

    def __init__(
        self,
        balances: Mapping[uuid.UUID, Balance],
        *,
        now: dt.datetime,
        effective_at: dt.datetime | None = None,
    ) -> None:
        """``effective_at``: when the operations take effect (a commit's); by default their
        transaction's ``effective_at``."""
        self.balances = balances
        self.now = now
        self.effective_at = effective_at

    def apply(self, tx: Transaction, leg: Leg, effect: str) -> Operation:
        balance = self.balances[leg.account_id]
        asset_code, leg_scale = leg.asset_of(tx)
        before = (balance.available, balance.on_hold, balance.scale)
        scale = max(balance.scale, leg_scale)
        available = rescale(balance.available, balance.scale, scale)
        on_hold = rescale(balance.on_hold, balance.scale, scale)
        limit = rescale(balance.overdraft_limit, balance.scale, scale)
        moved_available, moved_on_hold = change_of(
            leg.direction, effect, rescale(leg.amount, leg_scale, scale)
        )
        available, on_hold = available + moved_available, on_hold + moved_on_hold
        if available < -limit and not balance.is_external:
            overdraft = (
                f" (with an overdraft of up to {format_amount(limit, scale, asset_code)})"
                if limit
                else ""
            )
            raise LedgerError(
                ErrorCode.INSUFFICIENT_FUNDS,
                f"Insufficient funds in {leg.alias}: available "
                f"{format_amount(balance.available, balance.scale, asset_code)}{overdraft} "
                f"is less than {format_amount(leg.amount, leg_scale, asset_code)}.",
            )
        if on_hold < 0:
            raise LedgerError(
                ErrorCode.ACTION_NOT_PERMITTED, f"The amount on hold in {leg.alias} is too small."
            )
        if not (in_range(available) and in_range(on_hold) and in_range(limit)):
            raise LedgerError(
                ErrorCode.ACTION_NOT_PERMITTED,
                f"The balance of {leg.alias} would exceed the largest amount the ledger can hold.",
            )
        balance.available, balance.on_hold, balance.scale = available, on_hold, scale
        balance.overdraft_limit = limit
        balance.version += 1
        balance.updated_at = self.now
        return Operation(
            organization_id=tx.organization_id,
            ledger_id=tx.ledger_id,
            transaction_id=tx.id,
            account_id=leg.account_id,
            account_alias=leg.alias,
            portfolio_id=leg.portfolio_id,
            type=leg.direction,
            effect=effect,
            asset_code=asset_code,
            chart_of_accounts=leg.chart_of_accounts,
            description=leg.description,
            amount=leg.amount,
            scale=leg_scale,
            balance_available=before[0],
            balance_on_hold=before[1],
            balance_scale=before[2],
            balance_available_after=balance.available,
            balance_on_hold_after=balance.on_hold,
            balance_scale_after=balance.scale,
            balance_version=balance.version,
            created_at=self.now,
            updated_at=self.now,
            effective_at=self.effective_at or tx.effective_at,
            conversion=tx.conversion,
        )

    def apply_all(self, tx: Transaction, steps: list[Step]) -> list[Operation]:
        """All steps or none: a refused step restores every balance it had touched."""
        saved = {leg.account_id: _state(self.balances[leg.account_id]) for leg, _ in steps}
        try:
            return [self.apply(tx, leg, effect) for leg, effect in steps]
        except LedgerError:
            for account_id, state in saved.items():
                _restore(self.balances[account_id], state)
            raise


_STATE = ("available", "on_hold", "scale", "overdraft_limit", "version", "updated_at")
_State = tuple[Any, ...]


def _state(balance: Balance) -> _State:
    return tuple(getattr(balance, name) for name in _STATE)


def _restore(balance: Balance, state: _State) -> None:
    for name, value in zip(_STATE, state, strict=True):
        setattr(balance, name, value)
