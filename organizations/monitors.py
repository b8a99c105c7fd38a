"""Balance monitors (docs/BALANCE-MONITORS.md): a condition on a balance (its available
amount, what it has on hold, or how much of its overdraft it uses) against a threshold, and the
event ``balance_monitor.triggered`` when a change of the balance makes the condition true
(``below``, ``above``) or moves the value across the threshold (``crossing``). An account
monitor watches one account's balance; a tree monitor (``tree``) watches an account's
rolled-up balance in one asset: its own plus those of every account under it.

A monitor remembers whether its condition held when last seen (``holds``), so that it fires
once per crossing: again only after the condition was false in between. The posting that
changes a watched balance runs its monitors (``crossings``, called by
``transactions.writes.write_posting``) with its balances locked and, before it writes, the
rows of the monitors it runs locked too, in id order: postings into one tree are serialized at
its monitor, each adding its change to the sum the monitor last saw (``seen``), so no crossing
is seen twice or missed, and no posting waits to read the whole tree.

A balance row says whether any monitor watches it (``Balance.monitored``): its account's own,
or a tree monitor on the account or above it. A posting that touches no watched balance reads
no monitor at all. The flag is set, under the balance's lock, whenever that can change: a
monitor made or removed, an account created under a parent, or moved (``rewatch``).

What a tree monitor last saw is read whole from the tree only when a posting could not have
added to it: when the monitor is made, changed or set active (every balance of the tree
locked, so no posting into it is under way), and when a move changes what is under it (the
monitor's row locked, so a posting that has not yet added its change adds it after). A move
is not a posting: the monitor takes the tree as the move leaves it, without an event."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.utils import timezone

from ledgerproject.amounts import in_range, rescale
from ledgerproject.db import ArrayParam, apply_changes, by_database
from ledgerproject.errors import ErrorCode, LedgerError
from ledgerproject.metadata import validate_metadata
from ledgerproject.rows import Select
from organizations import account_tree, rollups
from organizations.locking import ledger_write
from organizations.models import Account, Balance, BalanceMonitor, Ledger
from organizations.selectors import external_account_of
from outbox import events
from outbox.models import Event

MAX_PER_ACCOUNT = 10


def _zero() -> dict[str, int]:
    return {"available": 0, "onHold": 0, "scale": 0}


# Rows per statement when a tree's balances are locked or flagged.
CHUNK = 500
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


def condition_holds(monitor: BalanceMonitor, available: int, on_hold: int, scale: int) -> bool:
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


# The active monitors that watch these accounts' balances, one row per account watched there
# (``watched_account``): the account's own monitors, and the tree monitors on it and on every
# account above it, at most ``account_tree.WALK_LIMIT`` levels up ``parent_account_id``; the
# organization's id in every lookup (the distribution column on Citus).
#
# PostgreSQL: a tree monitor's row is locked, in monitor-id order as balances are
# (``transactions.locking``): the LATERAL subquery that locks runs once per row of the
# subquery sorted by monitor id, in that order, as the inner side of a nested loop. An
# account's own monitor is only read: whatever changes it (a posting into the account, the
# monitor's create, update of what it checks, delete) holds the account's balance lock first,
# as this posting already does, so the balance lock orders them all; a posting skips a row
# lock it does not need (each one is a write to the table's page). One statement, whose plan
# does not depend on the tables' statistics: every lookup is an equality on a key inside a
# LATERAL subquery (OFFSET 0 keeps it there), and the lock reads each monitor by its primary
# key, nothing else (a filter on its state beside it would let the planner scan the partial
# index of live monitors instead; the state is checked again once the row is locked).
# Parameters: the accounts, the organization, the depth bound, the organization twice.
LOCK_WATCHERS = Select(
    BalanceMonitor,
    "watcher",
    """FROM (WITH RECURSIVE up (start, id, depth) AS (
    SELECT w.id, w.id, 1 FROM unnest(%s) AS w(id)
    UNION ALL
    SELECT up.start, a.parent_account_id, up.depth + 1 FROM up
    CROSS JOIN LATERAL (SELECT parent_account_id FROM organizations_account a
        WHERE a.organization_id = %s AND a.id = up.id OFFSET 0) a
    WHERE a.parent_account_id IS NOT NULL AND up.depth <= %s
), found AS (
    SELECT m.*, up.start AS watched_account FROM up
    CROSS JOIN LATERAL (SELECT * FROM organizations_balancemonitor m
        WHERE m.organization_id = %s AND m.account_id = up.id AND m.deleted_at IS NULL
        AND m.status_code <> 'INACTIVE' AND (up.depth = 1 OR m.tree) OFFSET 0) m
)
SELECT * FROM found WHERE tree IS NOT TRUE
UNION ALL
SELECT b.*, ordered.watched_account FROM (
    SELECT id, watched_account FROM found WHERE tree ORDER BY id
) ordered
CROSS JOIN LATERAL (SELECT * FROM organizations_balancemonitor locked
    WHERE locked.organization_id = %s AND locked.id = ordered.id OFFSET 0 FOR UPDATE) b
WHERE b.deleted_at IS NULL AND b.status_code <> 'INACTIVE'
) watcher ORDER BY watcher.id""",
    extra=["watcher.watched_account"],
)
# SQLite has no row locks (IMMEDIATE transactions serialize its writers) and no LATERAL: the
# same walk, read. Parameters: the organization, the accounts, the organization, the depth
# bound, the organization.
READ_WATCHERS = Select(
    BalanceMonitor,
    "watcher",
    """FROM (WITH RECURSIVE up (start, id, depth) AS (
    SELECT a.id, a.id, 1 FROM organizations_account a
    WHERE a.organization_id = %s AND a.id = ANY(%s)
    UNION ALL
    SELECT up.start, a.parent_account_id, up.depth + 1 FROM up
    JOIN organizations_account a ON a.organization_id = %s AND a.id = up.id
    WHERE a.parent_account_id IS NOT NULL AND up.depth <= %s
)
SELECT m.*, up.start AS watched_account FROM up
JOIN organizations_balancemonitor m ON m.organization_id = %s AND m.account_id = up.id
WHERE m.deleted_at IS NULL AND m.status_code <> 'INACTIVE' AND (up.depth = 1 OR m.tree)
) watcher ORDER BY watcher.id""",
    extra=["watcher.watched_account"],
)


def _lock_watchers_postgresql(
    organization_id: uuid.UUID, accounts: list[uuid.UUID]
) -> Iterable[BalanceMonitor]:
    limit, wanted = account_tree.WALK_LIMIT, ArrayParam(accounts, "uuid")
    params = [wanted, organization_id, limit, organization_id, organization_id]
    return LOCK_WATCHERS.fetch(params)


def _read_watchers_sqlite(
    organization_id: uuid.UUID, accounts: list[uuid.UUID]
) -> Iterable[BalanceMonitor]:
    organization, limit = rollups.db_id(organization_id), account_tree.WALK_LIMIT
    wanted = ArrayParam([rollups.db_id(account) for account in accounts], "uuid")
    params = [organization, wanted, organization, limit, organization]
    return READ_WATCHERS.fetch(params)


_lock_watchers = by_database(postgresql=_lock_watchers_postgresql, sqlite=_read_watchers_sqlite)


@dataclass
class Crossings:
    """What a write's operations did to the monitors of its balances: the events to write with
    it, and the monitors whose state changed, to save once it is written."""

    events: list[Event] = field(default_factory=list)
    changed: dict[uuid.UUID, BalanceMonitor] = field(default_factory=dict)

    def save(self) -> None:
        """Once the write is made, in its database transaction: what the monitors saw."""
        for monitor in self.changed.values():
            BalanceMonitor.objects.filter(
                organization_id=monitor.organization_id, pk=monitor.pk
            ).update(
                holds=monitor.holds,
                seen=monitor.seen,
                last_triggered_at=monitor.last_triggered_at,
                updated_at=monitor.updated_at,
            )


def _lock_monitors_of(
    organization_id: uuid.UUID, balances: Sequence[Balance]
) -> dict[uuid.UUID, list[BalanceMonitor]]:
    """The active monitors watching these locked balances, by the account each watches there,
    in the order they were made. A tree monitor's row is locked, in id order: its ``seen`` is
    added to by every posting into its tree; an account's own monitor is held by the account's
    balance lock (``LOCK_WATCHERS``). A monitor watching several of the accounts (a tree's) is
    one object under each."""
    watched = [balance.account_id for balance in balances if balance.monitored]
    if not watched:
        return {}
    found: dict[uuid.UUID, BalanceMonitor] = {}
    by_account: dict[uuid.UUID, list[BalanceMonitor]] = {}
    for row in _lock_watchers(organization_id, watched):
        monitor = found.setdefault(row.pk, row)
        # the statement's own column beside the model's; text on SQLite
        account = uuid.UUID(str(row.selected_extra[0]))  # type: ignore[attr-defined]
        watching = by_account.setdefault(account, [])
        if monitor not in watching:  # a tree with a cycle would name it again
            watching.append(monitor)
    for monitors in by_account.values():
        monitors.sort(key=lambda monitor: (monitor.created_at, monitor.pk))
    return by_account


def _added(seen: dict[str, int], op: Any) -> dict[str, int]:
    """A tree's sum after one of its accounts' operations: the sum before, plus what the
    operation changed of the account's balance, at the largest scale of the three."""
    top = max(seen["scale"], op.balance_scale, op.balance_scale_after)

    def change(before: int, after: int) -> int:
        return rescale(after, op.balance_scale_after, top) - rescale(before, op.balance_scale, top)

    return {
        "available": rescale(seen["available"], seen["scale"], top)
        + change(op.balance_available, op.balance_available_after),
        "onHold": rescale(seen["onHold"], seen["scale"], top)
        + change(op.balance_on_hold, op.balance_on_hold_after),
        "scale": top,
    }


def _by_transaction(operations: Sequence[Any]) -> Iterator[list[Any]]:
    """The operations of each transaction in turn, in the order they are written."""
    group: list[Any] = []
    for op in operations:
        if group and op.transaction_id != group[0].transaction_id:
            yield group
            group = []
        group.append(op)
    if group:
        yield group


def crossings(balances: Sequence[Balance], operations: Sequence[Any]) -> Crossings:
    """The monitors of these locked balances, run over the operations in the order they are
    written, each transaction's as one change: its balances (or, for a tree monitor, its
    tree's sum) after it are seen, so a batch whose transactions cross a threshold and back
    fires for the crossing, while a transfer between two accounts of one tree moves nothing.
    No query when no balance is watched."""
    found = Crossings()
    if not operations:
        return found
    # The organization from an operation: a locked balance row carries only what postings use.
    by_account = _lock_monitors_of(operations[0].organization_id, balances)
    if not by_account:
        return found
    now = timezone.now()
    for group in _by_transaction(operations):
        last: dict[uuid.UUID, tuple[BalanceMonitor, dict[str, int], Any]] = {}
        for op in group:
            for monitor in by_account.get(op.account_id, ()):
                if not monitor.tree:
                    balance = {
                        "available": op.balance_available_after,
                        "onHold": op.balance_on_hold_after,
                        "scale": op.balance_scale_after,
                    }
                elif op.asset_code == monitor.asset_code:
                    balance = _added(monitor.seen or _zero(), op)
                    if not _same_sum(balance, monitor.seen or _zero()):
                        monitor.seen, monitor.updated_at = balance, now
                        found.changed[monitor.pk] = monitor
                else:
                    continue
                last[monitor.pk] = (monitor, balance, op)
        for monitor, balance, op in last.values():
            after = condition_holds(
                monitor, balance["available"], balance["onHold"], balance["scale"]
            )
            fires = after != monitor.holds and (
                after or monitor.condition == BalanceMonitor.CROSSING
            )
            if after != monitor.holds:
                monitor.holds, monitor.updated_at = after, now
                found.changed[monitor.pk] = monitor
            if fires:
                monitor.last_triggered_at = now
                found.events.append(
                    events.build(
                        events.MONITOR_TRIGGERED, monitor, _triggered(monitor, op, balance)
                    )
                )
    return found


def _triggered(monitor: BalanceMonitor, op: Any, balance: dict[str, int]) -> dict[str, Any]:
    """The event's data. ``accountId`` is the monitor's account (a tree's root); ``op``, the
    transaction's last operation on the watched account (or, for a tree, on any account of the
    tree, in the monitor's asset)."""
    value = value_of(monitor.measure, balance["available"], balance["onHold"])
    alias = op.account_alias
    if op.account_id != monitor.account_id:
        alias = Account.objects.values_list("alias", flat=True).get(
            organization_id=monitor.organization_id, pk=monitor.account_id
        )
    return {
        "monitor": events.rendering(monitor),
        "accountId": str(monitor.account_id),
        "accountAlias": alias,
        "assetCode": op.asset_code,
        "value": {"amount": value, "scale": balance["scale"]},
        "balance": dict(balance),
        "transactionId": str(op.transaction_id),
        "operationId": str(op.id),
        "operationAccountId": str(op.account_id),
    }


# --- create, update, delete -----------------------------------------------------------------


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


def _asset_of(account: Account, tree: bool, asset_code: str | None) -> str:
    """The asset a tree monitor watches (the account's own unless said, else an instrument of
    the ledger); an account monitor watches its account's balance, whose asset is the
    account's."""
    if tree:
        # Only checked, not held: no balance is made in the asset, and a monitor on an asset
        # deleted later watches a sum that no longer changes.
        if (
            asset_code
            and not external_account_of(
                account.organization_id, account.ledger_id, asset_code
            ).exists()
        ):
            raise LedgerError(
                ErrorCode.ASSET_CODE_NOT_FOUND,
                f"No active instrument with code '{asset_code}' in this ledger.",
                fields={"assetCode": "not an active instrument of this ledger"},
            )
        return asset_code or account.asset_code
    if asset_code not in (None, account.asset_code):
        raise LedgerError(
            ErrorCode.BAD_REQUEST,
            "An account monitor watches its account's own asset; assetCode is for tree monitors.",
            fields={"assetCode": f"the account holds {account.asset_code}"},
        )
    return account.asset_code


def monitor_create(
    *,
    ledger: Ledger,
    account_id: uuid.UUID,
    measure: str,
    condition: str,
    threshold: dict[str, int],
    tree: bool = False,
    asset_code: str | None = None,
    description: str = "",
    status_code: str = "ACTIVE",
    status_description: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> BalanceMonitor:
    """A monitor, seeing the balance as it is now: a condition already true does not fire
    until it has been false."""
    amount, scale = threshold["amount"], threshold["scale"]
    _check(measure, condition, amount, scale)
    with ledger_write(ledger, account_tree=True):
        account = _active_account(ledger, account_id)
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
            tree=tree or None,  # null is false: the column was added nullable
            asset_code=_asset_of(account, tree, asset_code),
            description=description,
            status_code=status_code,
            status_description=status_description,
            metadata=validate_metadata(metadata or {}),
        )
        monitor.save(force_insert=True)  # before ``rewatch``, which reads the monitors
        rewatch(account, whole_tree=tree)
        _rebase(monitor)
        monitor.save(update_fields=["holds", "seen"])
        events.record(monitor, events.CREATED)
    return monitor


# What a monitor checks: a change of one of these sees the balance as it is now.
CHECKED = ("threshold", "threshold_scale", "condition", "status_code")


def monitor_update(*, monitor: BalanceMonitor, data: dict[str, Any]) -> BalanceMonitor:
    """Threshold, condition, description, status and metadata. A new threshold, condition or
    status sees the balance as it is now, as a new monitor does: the balances watched are
    locked for that (a whole tree's, for a tree monitor). A change of the description, status
    description or metadata alone locks only the monitor's row, and writes only those fields:
    postings may be adding to what it saw meanwhile."""
    data = dict(data)
    threshold = data.pop("threshold", None)
    if threshold is not None:
        data["threshold"], data["threshold_scale"] = threshold["amount"], threshold["scale"]
    if not any(name in data for name in CHECKED):
        with ledger_write(monitor):
            current = _read_again(monitor, lock=True)
            apply_changes(current, data)
            current.save(update_fields=[*data, "updated_at"])
            events.record(current, events.UPDATED)
        return current
    with ledger_write(monitor, account_tree=True):
        _lock_watched(monitor.account, whole_tree=bool(monitor.tree))
        current = _read_again(monitor)
        apply_changes(current, data)
        _check(current.measure, current.condition, current.threshold, current.threshold_scale)
        _rebase(current)
        current.save()
        events.record(current, events.UPDATED)
    return current


def monitor_delete(*, monitor: BalanceMonitor) -> BalanceMonitor:
    with ledger_write(monitor, account_tree=True):
        _lock_watched(monitor.account, whole_tree=bool(monitor.tree))
        current = _read_again(monitor)
        current.deleted_at = timezone.now()
        current.save(update_fields=["deleted_at", "updated_at"])
        rewatch(current.account, whole_tree=bool(current.tree))
        events.record(current, events.DELETED)
    return current


def _read_again(monitor: BalanceMonitor, *, lock: bool = False) -> BalanceMonitor:
    """The monitor as it is now, under the locks of the balances it watches (taken first), or
    with its own row ``lock``ed: a change committed meanwhile is never undone."""
    rows = BalanceMonitor.objects.select_for_update() if lock else BalanceMonitor.objects
    current = rows.get(organization_id=monitor.organization_id, pk=monitor.pk)
    if current.deleted_at is not None:
        raise LedgerError(ErrorCode.ALREADY_REMOVED, "The monitor has already been removed.")
    return current


def _rebase(monitor: BalanceMonitor) -> None:
    """What the monitor sees now, read from the balances (with no posting into them under way:
    their rows are locked, or, for a move, the monitor's)."""
    if monitor.tree:
        totals = rollups.rolled_up_now(monitor.ledger, [monitor.account_id])
        balance = totals.get(monitor.account_id, {}).get(monitor.asset_code or "")
        monitor.seen = dict(balance or _zero())
        seen = monitor.seen
    else:
        row = Balance.objects.get(
            organization_id=monitor.organization_id, account_id=monitor.account_id
        )
        seen = {"available": row.available, "onHold": row.on_hold, "scale": row.scale}
    monitor.holds = condition_holds(monitor, seen["available"], seen["onHold"], seen["scale"])


def retire_with_account(account: Account) -> None:
    """The monitors of an account being deleted, deleted with it (each with its event), and its
    balance no longer watched by them; inside the account's delete, which holds its balance and
    the ledger's lock for changes of the account tree. The account has no children left."""
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


# --- which balances are watched -------------------------------------------------------------

# The accounts under the roots (``rollups.TREE``), with each one's parent and depth.
SUBTREE = """SELECT tree.id, a.parent_account_id, tree.depth FROM tree
JOIN organizations_account a ON a.organization_id = %s AND a.id = tree.id ORDER BY tree.depth"""


def _subtree(account: Account, whole_tree: bool) -> dict[uuid.UUID, uuid.UUID | None]:
    """``{account id: parent id}`` of the account and, for ``whole_tree``, every account under
    it, parents before children."""
    if not whole_tree:
        return {account.pk: account.parent_account_id}
    rows = rollups.tree_rows(
        account.ledger, [account.pk], SUBTREE, [rollups.db_id(account.organization_id)]
    )
    found: dict[uuid.UUID, uuid.UUID | None] = {}
    for pk, parent, _ in rows:
        found.setdefault(uuid.UUID(str(pk)), parent and uuid.UUID(str(parent)))
    return found


def _lock_watched(account: Account, *, whole_tree: bool) -> dict[uuid.UUID, Balance]:
    """Lock the balances of the account (and, for ``whole_tree``, of every account under it) in
    balance-id order, as postings lock them; keyed by account id. Once they are held, no
    posting into them is under way until this database transaction ends."""
    return _lock_balances(account.organization_id, list(_subtree(account, whole_tree)))


def _lock_balances(
    organization_id: uuid.UUID, accounts: list[uuid.UUID]
) -> dict[uuid.UUID, Balance]:
    ids: list[uuid.UUID] = []
    for start in range(0, len(accounts), CHUNK):
        ids += Balance.objects.filter(
            organization_id=organization_id, account_id__in=accounts[start : start + CHUNK]
        ).values_list("pk", flat=True)
    ids.sort()
    locked: dict[uuid.UUID, Balance] = {}
    for start in range(0, len(ids), CHUNK):
        rows = (
            Balance.objects.select_for_update()
            .filter(organization_id=organization_id, pk__in=ids[start : start + CHUNK])
            .order_by("id")
        )
        locked.update((row.account_id, row) for row in rows)
    return locked


def _above(account: Account, start: uuid.UUID) -> list[uuid.UUID]:
    """``start`` and every account above it, as far as a posting's walk goes (``LOCK_WATCHERS``):
    a tree made before the depth rule may be deeper than they allow."""
    return account_tree.ancestors(account, start, limit=account_tree.WALK_LIMIT)


def watch_new_child(account: Account) -> None:
    """An account just made under a parent: watched if a tree monitor above it says so. A
    ledger with no tree monitor has nothing to do."""
    trees = BalanceMonitor.objects.filter(
        organization_id=account.organization_id,
        ledger_id=account.ledger_id,
        tree=True,
        deleted_at__isnull=True,
    )
    if trees.exists():
        rewatch(account, whole_tree=False)


def rewatch(account: Account, *, whole_tree: bool) -> None:
    """Set ``Balance.monitored`` of the account's balance (and, for ``whole_tree``, of every
    balance under it) from the monitors and the tree as they are, with those balances locked.
    Called by every change that can alter it, inside ``ledger_write(..., account_tree=True)``,
    so two such changes of one ledger run one after the other."""
    parents = _subtree(account, whole_tree)
    locked = _lock_balances(account.organization_id, list(parents))
    monitors = BalanceMonitor.objects.filter(
        organization_id=account.organization_id,
        ledger_id=account.ledger_id,
        deleted_at__isnull=True,
    ).values_list("account_id", "tree")
    own, trees = set(), set()
    for account_id, tree in monitors:
        own.add(account_id)
        if tree:
            trees.add(account_id)
    above = _above(account, account.pk)[1:]
    covered = {account.pk: account.pk in trees or any(pk in trees for pk in above)}
    for pk, parent in parents.items():  # parents first
        if pk != account.pk:
            covered[pk] = pk in trees or covered.get(parent, False)  # type: ignore[arg-type]
    for flag in (True, False):
        changed = [
            balance.pk
            for pk, balance in locked.items()
            if bool(balance.monitored) != flag and (pk in own or covered.get(pk, False)) == flag
        ]
        for start in range(0, len(changed), CHUNK):
            Balance.objects.filter(
                organization_id=account.organization_id, pk__in=changed[start : start + CHUNK]
            ).update(monitored=flag)


def after_move(account: Account, old_parent: uuid.UUID | None) -> None:
    """A move of ``account`` (with everything under it) from under ``old_parent``, inside its
    ``ledger_write(..., account_tree=True)``: the moved balances flagged as their new place
    says, and every tree monitor above the old place or the new one sees its tree as the move
    leaves it (module docstring)."""
    rewatch(account, whole_tree=True)
    above = set(_above(account, account.pk)[1:])
    if old_parent is not None:
        above.update(_above(account, old_parent))
    if not above:
        return
    found = (
        BalanceMonitor.objects.select_for_update()
        .filter(
            organization_id=account.organization_id,
            account_id__in=above,
            tree=True,
            deleted_at__isnull=True,
        )
        .order_by("id")
    )
    for monitor in found:
        _rebase(monitor)
        monitor.save(update_fields=["holds", "seen", "updated_at"])
        events.record(monitor, events.UPDATED)  # what it sees changed: no crossing, no trigger


def _same_sum(one: dict[str, int], other: dict[str, int]) -> bool:
    top = max(one["scale"], other["scale"])
    return all(
        rescale(one[key], one["scale"], top) == rescale(other[key], other["scale"], top)
        for key in ("available", "onHold")
    )


def tree_monitor_problems(ledger: Ledger) -> list[str]:
    """Each active tree monitor whose kept sum is not its tree's (``check_ledger``): the sum is
    added to by postings, so this is where a change of a balance that went around them shows."""
    found = list(
        BalanceMonitor.objects.filter(
            organization_id=ledger.organization_id,
            ledger_id=ledger.pk,
            tree=True,
            deleted_at__isnull=True,
        ).exclude(status_code=INACTIVE)
    )
    if not found:
        return []
    totals = rollups.rolled_up_now(ledger, [monitor.account_id for monitor in found])
    problems = []
    for monitor in found:
        tree_sum = totals.get(monitor.account_id, {}).get(monitor.asset_code or "", _zero())
        if not _same_sum(monitor.seen or _zero(), tree_sum):
            problems.append(
                f"balance monitor {monitor.pk}: keeps {monitor.seen} of its tree's "
                f"{monitor.asset_code}, which holds {dict(tree_sum)}"
            )
    return problems
