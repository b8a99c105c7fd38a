"""Balance monitors (docs/BALANCE-MONITORS.md): a condition on one account's balance (its
available amount, what it has on hold, or how much of its overdraft it uses) against a
threshold, and the event ``balance_monitor.triggered`` when a change of the balance makes the
condition true (``below``, ``above``) or moves the value across the threshold (``crossing``).

A monitor remembers whether its condition held when last seen (``holds``), so that it fires
once per crossing: again only after the condition was false in between. What it last saw is
changed only under the lock of its account's balance, by the posting that changed the balance
(``crossings``, called by ``transactions.writes.write_posting`` with the balances locked) or
by the monitor's own create and update: postings on one account, and the changes of its
monitors, are serialized by that one lock, so no crossing is seen twice or missed.

A balance row says whether its account has a monitor (``Balance.monitored``): a posting that
touches none reads no monitor at all."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.utils import timezone

from ledgerproject.amounts import in_range, rescale
from ledgerproject.db import apply_changes
from ledgerproject.errors import ErrorCode, LedgerError
from ledgerproject.metadata import validate_metadata
from organizations.locking import ledger_write
from organizations.models import Account, Balance, BalanceMonitor, Ledger
from outbox import events
from outbox.models import Event

MAX_PER_ACCOUNT = 10
# A monitor whose status is INACTIVE watches nothing until it is set active again (it then
# takes the balance as it finds it, as a new monitor does).
INACTIVE = "INACTIVE"


def value_of(measure: str, available: int, on_hold: int) -> int:
    """What a monitor watches, at the balance's scale."""
    if measure == BalanceMonitor.AVAILABLE:
        return available
    if measure == BalanceMonitor.ON_HOLD:
        return on_hold
    return max(0, -available)  # the overdraft used


def holds(monitor: BalanceMonitor, available: int, on_hold: int, scale: int) -> bool:
    """Whether the monitor's condition holds of this balance (for ``crossing``: whether the
    value is at or above the threshold). Compared exactly, at the larger of the two scales."""
    top = max(scale, monitor.threshold_scale)
    value = rescale(value_of(monitor.measure, available, on_hold), scale, top)
    threshold = rescale(monitor.threshold, monitor.threshold_scale, top)
    if monitor.condition == BalanceMonitor.BELOW:
        return value < threshold
    if monitor.condition == BalanceMonitor.ABOVE:
        return value > threshold
    return value >= threshold


@dataclass
class Crossings:
    """What a write's operations did to the monitors of its balances: the events to write with
    it, and the monitors whose ``holds`` changed, to save once it is written."""

    events: list[Event] = field(default_factory=list)
    changed: dict[uuid.UUID, BalanceMonitor] = field(default_factory=dict)

    def keep(self) -> None:
        """Once the write is made, in its database transaction: what the monitors saw."""
        for monitor in self.changed.values():
            BalanceMonitor.objects.filter(
                organization_id=monitor.organization_id, pk=monitor.pk
            ).update(
                holds=monitor.holds,
                last_triggered_at=monitor.last_triggered_at,
                updated_at=monitor.updated_at,
            )


def crossings(balances: Sequence[Balance], operations: Sequence[Any]) -> Crossings:
    """The monitors of these locked balances, run over the operations in the order they are
    written: each operation's balance after it is seen, so a batch that crosses a threshold and
    back fires for the crossing. No query when no balance is monitored."""
    watched = [balance.account_id for balance in balances if balance.monitored]
    found = Crossings()
    if not watched:
        return found
    by_account: dict[uuid.UUID, list[BalanceMonitor]] = {}
    rows = (
        BalanceMonitor.objects.filter(
            organization_id=balances[0].organization_id,
            account_id__in=watched,
            deleted_at__isnull=True,
        )
        .exclude(status_code=INACTIVE)
        .order_by("created_at", "id")
    )
    for monitor in rows:
        by_account.setdefault(monitor.account_id, []).append(monitor)
    now = timezone.now()
    for op in operations:
        for monitor in by_account.get(op.account_id, ()):
            after = holds(
                monitor, op.balance_available_after, op.balance_on_hold_after,
                op.balance_scale_after,
            )  # fmt: skip
            fires = after != monitor.holds and (
                after or monitor.condition == BalanceMonitor.CROSSING
            )
            if after != monitor.holds:
                monitor.holds, monitor.updated_at = after, now
                found.changed[monitor.pk] = monitor
            if fires:
                monitor.last_triggered_at = now
                found.events.append(
                    events.build(events.MONITOR_TRIGGERED, monitor, _triggered(monitor, op))
                )
    return found


def _triggered(monitor: BalanceMonitor, op: Any) -> dict[str, Any]:
    value = value_of(monitor.measure, op.balance_available_after, op.balance_on_hold_after)
    return {
        "monitor": events.rendering(monitor),
        "accountId": str(op.account_id),
        "accountAlias": op.account_alias,
        "value": {"amount": value, "scale": op.balance_scale_after},
        "balance": {
            "available": op.balance_available_after,
            "onHold": op.balance_on_hold_after,
            "scale": op.balance_scale_after,
        },
        "transactionId": str(op.transaction_id),
        "operationId": str(op.id),
    }


# --- create, update, delete -----------------------------------------------------------------


def _locked_balance(organization_id: uuid.UUID, account_id: uuid.UUID) -> Balance:
    """The account's balance, locked: monitors change only under it (the module's docstring)."""
    return (
        Balance.objects.select_for_update()
        .filter(organization_id=organization_id, account_id=account_id)
        .get()
    )


def _active_account(ledger: Ledger, account_id: uuid.UUID) -> Account:
    account = Account.objects.filter(
        organization_id=ledger.organization_id,
        ledger_id=ledger.pk,
        pk=account_id,
        deleted_at__isnull=True,
    ).first()
    if account is None:
        raise LedgerError(
            ErrorCode.ACTION_NOT_PERMITTED,
            f"No active account {account_id} in this ledger.",
            fields={"accountId": "not an active account of this ledger"},
        )
    return account


def _check(measure: str, condition: str, threshold: int, scale: int) -> None:
    problems = {}
    if measure not in BalanceMonitor.MEASURES:
        problems["measure"] = f"one of {', '.join(BalanceMonitor.MEASURES)}"
    if condition not in BalanceMonitor.CONDITIONS:
        problems["condition"] = f"one of {', '.join(BalanceMonitor.CONDITIONS)}"
    if not 0 <= scale <= 18:
        problems["threshold.scale"] = "0 to 18"
    if measure in (BalanceMonitor.ON_HOLD, BalanceMonitor.OVERDRAFT_USED) and threshold < 0:
        problems["threshold.amount"] = f"{measure} is never negative"
    elif not in_range(threshold):
        problems["threshold.amount"] = "at most 38 digits"
    if problems:
        raise LedgerError(
            ErrorCode.BAD_REQUEST,
            "Invalid balance monitor: " + "; ".join(f"{k} {v}" for k, v in problems.items()),
            fields=problems,
        )


def monitor_create(
    *,
    ledger: Ledger,
    account_id: uuid.UUID,
    measure: str,
    condition: str,
    threshold: dict[str, int],
    description: str = "",
    status_code: str = "ACTIVE",
    status_description: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> BalanceMonitor:
    """A monitor, seeing the balance as it is now: a condition already true does not fire
    until it has been false."""
    amount, scale = threshold["amount"], threshold["scale"]
    _check(measure, condition, amount, scale)
    with ledger_write(ledger):
        account = _active_account(ledger, account_id)
        balance = _locked_balance(account.organization_id, account.pk)
        _active_account(ledger, account_id)  # not deleted while we waited for its balance
        active = BalanceMonitor.objects.filter(
            organization_id=ledger.organization_id, account_id=account.pk, deleted_at__isnull=True
        )
        if active.count() >= MAX_PER_ACCOUNT:
            raise LedgerError(
                ErrorCode.ACTION_NOT_PERMITTED,
                f"An account has at most {MAX_PER_ACCOUNT} balance monitors.",
                fields={"accountId": f"already has {MAX_PER_ACCOUNT} monitors"},
            )
        monitor = BalanceMonitor(
            organization_id=ledger.organization_id,
            ledger=ledger,
            account=account,
            measure=measure,
            condition=condition,
            threshold=amount,
            threshold_scale=scale,
            description=description,
            status_code=status_code,
            status_description=status_description,
            metadata=validate_metadata(metadata or {}),
        )
        monitor.holds = holds(monitor, balance.available, balance.on_hold, balance.scale)
        monitor.save(force_insert=True)
        _mark(balance, monitored=True)
        events.record(monitor, events.CREATED)
    return monitor


def monitor_update(*, monitor: BalanceMonitor, data: dict[str, Any]) -> BalanceMonitor:
    """Threshold, condition, description, status and metadata. A new threshold or condition
    sees the balance as it is now, as a new monitor does."""
    data = dict(data)
    threshold = data.pop("threshold", None)
    if threshold is not None:
        data["threshold"], data["threshold_scale"] = threshold["amount"], threshold["scale"]
    with ledger_write(monitor):
        balance = _locked_balance(monitor.organization_id, monitor.account_id)
        current = _read_again(monitor)
        apply_changes(current, data)
        _check(current.measure, current.condition, current.threshold, current.threshold_scale)
        current.holds = holds(current, balance.available, balance.on_hold, balance.scale)
        current.save()
        events.record(current, events.UPDATED)
    return current


def monitor_delete(*, monitor: BalanceMonitor) -> BalanceMonitor:
    with ledger_write(monitor):
        balance = _locked_balance(monitor.organization_id, monitor.account_id)
        current = _read_again(monitor)
        current.deleted_at = timezone.now()
        current.save(update_fields=["deleted_at", "updated_at"])
        others = BalanceMonitor.objects.filter(
            organization_id=current.organization_id,
            account_id=current.account_id,
            deleted_at__isnull=True,
        )
        if not others.exists():
            _mark(balance, monitored=False)
        events.record(current, events.DELETED)
    return current


def _read_again(monitor: BalanceMonitor) -> BalanceMonitor:
    """The monitor as it is now, under its balance's lock (taken first, by the account, which a
    monitor never changes): a change committed meanwhile is never undone."""
    current = BalanceMonitor.objects.get(organization_id=monitor.organization_id, pk=monitor.pk)
    if current.deleted_at is not None:
        raise LedgerError(ErrorCode.ALREADY_REMOVED, "The monitor has already been removed.")
    return current


def retire_with_account(account: Account) -> None:
    """The monitors of an account being deleted, deleted with it (each with its event), and its
    balance no longer monitored; inside the account's delete, which holds its balance."""
    found = BalanceMonitor.objects.filter(
        organization_id=account.organization_id, account_id=account.pk, deleted_at__isnull=True
    )
    now = timezone.now()
    for monitor in found:
        monitor.deleted_at = now
        monitor.save(update_fields=["deleted_at", "updated_at"])
        events.record(monitor, events.DELETED)
    Balance.objects.filter(organization_id=account.organization_id, account_id=account.pk).update(
        monitored=False
    )


def _mark(balance: Balance, *, monitored: bool) -> None:
    """Whether postings on the balance read its monitors (the flag alone: the double-entry
    triggers watch the amounts, not it)."""
    if bool(balance.monitored) != monitored:
        Balance.objects.filter(organization_id=balance.organization_id, pk=balance.pk).update(
            monitored=monitored
        )
