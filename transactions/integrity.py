"""Ledger integrity checks, used by ``manage.py check_ledger``, the admin and the tests.

Each check is a database query (aggregates and window functions), so the cost is a handful of
queries per ledger whatever its size. A check returns the violations it found, as sentences.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Q, QuerySet

from journal.verify import check_chain
from ledgerproject.amounts import format_amount, rescale
from ledgerproject.db import grouped_sums, one_snapshot
from organizations.account_tree import tree_problems
from organizations.models import Balance, Ledger, within_overdraft
from organizations.monitors import tree_monitor_problems
from transactions.against_journal import check_books_match_journal
from transactions.models import Operation, Transaction
from transactions.money import combine_scales


@dataclass
class LedgerReport:
    ledger: Ledger
    checks: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations


def _balance_totals(queryset: QuerySet[Balance]) -> dict[str, tuple[int, int]]:
    """Per asset: available + onHold of the balances, exactly, at the asset's largest scale."""
    sums = grouped_sums(queryset, ("asset_code", "scale"), ("available", "on_hold"))
    return combine_scales((asset, scale, total) for (asset, scale), total in sums.items())


def check_sums_to_zero(ledger: Ledger) -> list[str]:
    return [
        f"{asset}: balances sum to {format_amount(value, scale, asset)}, not zero"
        for asset, (value, scale) in _balance_totals(
            Balance.objects.filter(organization_id=ledger.organization_id, ledger_id=ledger.pk)
        ).items()
        if value != 0
    ]


def check_no_negative_balance(ledger: Ledger) -> list[str]:
    """No balance below minus its overdraft limit (external accounts excepted), no negative
    limit, nothing negative on hold."""
    bad = Balance.objects.filter(
        organization_id=ledger.organization_id, ledger_id=ledger.pk
    ).filter(
        (Q(is_external=False) & ~Q(within_overdraft()))
        | Q(on_hold__lt=0)
        | Q(overdraft_limit__lt=0)
    )
    return [
        f"{b.account.alias}: balance below its limit (available {b.available}, onHold "
        f"{b.on_hold}, overdraft limit {b.overdraft_limit}, scale {b.scale})"
        for b in bad.select_related("account")
    ]


def _same(one: tuple[int, int, int], other: tuple[int, int, int]) -> bool:
    """Two (available, onHold, scale) states of equal value: setting an overdraft limit may
    raise a balance's scale (an exact rescaling) between two operations."""
    top = max(one[2], other[2])
    return all(rescale(a, one[2], top) == rescale(b, other[2], top) for a, b in
               zip(one[:2], other[:2], strict=True))  # fmt: skip


def check_statements_replay(ledger: Ledger) -> list[str]:
    """Every operation starts where the previous one of its account ended, versions count the
    operations, and the last one ends at the account's balance. One ordered pass."""
    balances = {
        b.account_id: b
        for b in Balance.objects.filter(
            organization_id=ledger.organization_id, ledger_id=ledger.pk
        ).select_related("account")
    }
    ends: dict[object, tuple[int, tuple[int, int, int]]] = {}
    problems = []
    stream = (
        Operation.objects.filter(organization_id=ledger.organization_id, ledger_id=ledger.pk)
        .order_by("account_id", "balance_version")
        .values_list(
            "account_id",
            "account_alias",
            "balance_version",
            "balance_available",
            "balance_on_hold",
            "balance_scale",
            "balance_available_after",
            "balance_on_hold_after",
            "balance_scale_after",
        )
    )
    for account_id, alias, version, *states in stream.iterator(chunk_size=5000):
        count, previous = ends.get(account_id, (0, (0, 0, 0)))
        if version != count + 1:
            problems.append(f"{alias}: operation version {version} follows {count}")
        if not _same(tuple(states[:3]), previous):
            problems.append(f"{alias}: operation {version} does not start where the last ended")
        ends[account_id] = (version, (states[3], states[4], states[5]))
    for account_id, balance in balances.items():
        count, state = ends.get(account_id, (0, (0, 0, 0)))
        actual = (balance.available, balance.on_hold, balance.scale)
        if balance.version != count or not _same(state, actual):
            problems.append(
                f"{balance.account.alias}: statement ({count} operations) ends at {state}, "
                f"balance is {actual} at version {balance.version}"
            )
    return problems


def _operation_sums(ledger: Ledger) -> dict[object, dict[str, int]]:
    """Per transaction and asset: its debits, credits, and what it held, settled and
    released (a transaction's operations in one asset share one scale)."""
    sums = grouped_sums(
        Operation.objects.filter(organization_id=ledger.organization_id, ledger_id=ledger.pk),
        ("transaction_id", "asset_code", "type", "effect"),
        ("amount",),
    )
    out: dict[object, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for (pk, asset, kind, effect), total in sums.items():
        parts = out[pk, asset]
        if kind == "DEBIT" and effect in ("POST", "SETTLE"):
            parts["debits"] += total
        if kind == "CREDIT" and effect == "POST":
            parts["credits"] += total
        parts[effect] += total
    return out


def check_transactions_balance(ledger: Ledger) -> list[str]:
    """Per transaction, in each asset it moves: what left sources equals what reached
    destinations, and the states agree with the operations (holds settled on commit, released
    on cancel). A conversion moves its amount in the asset sent and the converted amount in
    the asset delivered."""
    sums = _operation_sums(ledger)
    rows = (
        (pk, status, reversal, amount, *(sums[pk, asset][n] for n in SUMMED), parent, asset)
        for pk, status, reversal, parent, amounts in _amounts_moved(ledger)
        for asset, amount in amounts.items()
    )
    problems = []
    released_by_parent: dict[tuple[Any, str], int] = {}
    held_by_id: dict[tuple[Any, str], int] = {}
    for row in rows:
        pk, status, reversal, amount, debits, credits, held, settled, released, parent, asset = row
        if debits != credits:
            problems.append(f"transaction {pk}: debits {debits} != credits {credits} in {asset}")
        if status == Transaction.SENT and not released and debits != amount:
            problems.append(f"transaction {pk}: moved {debits}, amount is {amount}")
        if status == Transaction.PRE_APPROVED and (held != amount or settled or debits):
            problems.append(f"transaction {pk}: PRE_APPROVED but holds {held} of {amount}")
        if held and status == Transaction.SENT and settled + released != held:
            problems.append(f"transaction {pk}: committed with {settled} of {held} settled")
        if status == Transaction.CREATED:
            problems.append(f"transaction {pk}: left in CREATED")
        if reversal and released:
            released_by_parent[parent, asset] = released
        if status == Transaction.CANCELED:
            held_by_id[pk, asset] = held
    for (pk, asset), held in held_by_id.items():
        if released_by_parent.get((pk, asset)) != held:
            problems.append(f"transaction {pk}: CANCELED but its holds were not all released")
    return problems


def _amounts_moved(ledger: Ledger) -> Iterator[tuple[Any, str, bool, Any, dict[str, int]]]:
    """Each transaction's id, status, whether it reverts, parent, and amount per asset."""
    for pk, status, reversal, parent, asset, amount, conversion in Transaction.objects.filter(
        organization_id=ledger.organization_id, ledger_id=ledger.pk
    ).values_list("id", "status", "is_reversal", "parent_id", "asset_code", "amount", "conversion"):
        amounts = {asset: int(amount)}
        if conversion is not None:
            delivered = conversion["delivered"]
            amounts[delivered["assetCode"]] = int(delivered["amount"])
        yield pk, status, reversal, parent, amounts


def check_reversals(ledger: Ledger) -> list[str]:
    bad = Transaction.objects.filter(
        organization_id=ledger.organization_id, ledger_id=ledger.pk, is_reversal=True
    ).filter(Q(parent__isnull=True) | Q(parent__is_reversal=True))
    return [f"transaction {t.pk}: a reversal without a revertible parent" for t in bad]


SUMMED = ("debits", "credits", "HOLD", "SETTLE", "RELEASE")

JOURNAL_CHAIN = "the journal's blocks chain and hold their entries"
BOOKS_AGAINST_JOURNAL = "the books match their journal"
CHECKS: list[tuple[str, Callable[[Ledger], list[str]]]] = [
    ("balances sum to zero per asset", check_sums_to_zero),
    ("no balance below minus its overdraft limit (externals excepted)", check_no_negative_balance),
    ("statements replay to balances", check_statements_replay),
    ("every transaction's debits equal its credits; states agree", check_transactions_balance),
    ("reversals point at revertible transactions", check_reversals),
    (
        "the account tree keeps its rules",
        lambda ledger: tree_problems(ledger.organization_id, ledger.pk),
    ),
    ("tree monitors keep their trees' sums", tree_monitor_problems),
    (JOURNAL_CHAIN, lambda ledger: check_chain(ledger.organization_id, ledger.pk)),
    (BOOKS_AGAINST_JOURNAL, check_books_match_journal),
]


def ledger_check(
    ledger: Ledger,
    *,
    progress: Callable[[str], None] | None = None,
    without: Collection[str] = (),
) -> LedgerReport:
    """Run every check (but those named in ``without``) on one snapshot of the ledger (on
    PostgreSQL a REPEATABLE READ, read-only transaction), so that postings landing meanwhile
    cannot show as violations. Called inside a caller's transaction, the checks share that
    transaction's view instead."""
    report = LedgerReport(ledger=ledger)
    with one_snapshot():
        for name, check in CHECKS:
            if name in without:
                continue
            if progress:
                progress(name)
            report.checks.append(name)
            report.violations += [f"ledger {ledger.pk}: {v}" for v in check(ledger)]
    return report
