"""Ledger integrity checks, used by ``manage.py check_ledger``, the admin and the tests.

Each check is a database query (aggregates and window functions), so the cost is a handful of
queries per ledger whatever its size. A check returns the violations it found, as sentences.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from django.db import connection, transaction
from django.db.models import F, IntegerField, Q, Sum, Value
from django.db.models.functions import Coalesce

from organizations.models import Ledger
from transactions.models import Balance, Operation, Transaction


@dataclass
class LedgerReport:
    ledger: Ledger
    checks: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations


def _exact_sum(groups: Iterable[tuple[str, int, int]]) -> dict[str, tuple[int, int]]:
    """(asset, scale, value) groups -> asset: (value at the largest scale, that scale)."""
    parts: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for asset, scale, value in groups:
        parts[asset].append((int(value or 0), int(scale)))
    out = {}
    for asset, items in parts.items():
        top = max(s for _, s in items)
        out[asset] = (sum(v * 10 ** (top - s) for v, s in items), top)
    return out


def check_sums_to_zero(ledger: Ledger) -> list[str]:
    groups = (
        Balance.objects.filter(ledger_id=ledger.pk)
        .values_list("asset_code", "scale")
        .annotate(total=Sum(F("available") + F("on_hold")))
        .order_by()
    )
    return [
        f"{asset}: balances sum to {value} (scale {scale}), not zero"
        for asset, (value, scale) in _exact_sum(groups).items()
        if value != 0
    ]


def check_no_negative_balance(ledger: Ledger) -> list[str]:
    bad = Balance.objects.filter(ledger_id=ledger.pk).filter(
        Q(is_external=False, available__lt=0) | Q(on_hold__lt=0)
    )
    return [
        f"{b.account.alias}: negative balance (available {b.available}, onHold {b.on_hold})"
        for b in bad.select_related("account")
    ]


def check_statements_replay(ledger: Ledger) -> list[str]:
    """Every operation starts where the previous one of its account ended, versions count the
    operations, and the last one ends at the account's balance. One ordered pass."""
    balances = {
        b.account_id: b
        for b in Balance.objects.filter(ledger_id=ledger.pk).select_related("account")
    }
    ends: dict[object, tuple[int, tuple[int, int, int]]] = {}
    problems = []
    stream = (
        Operation.objects.filter(ledger_id=ledger.pk)
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
        if tuple(states[:3]) != previous:
            problems.append(f"{alias}: operation {version} does not start where the last ended")
        ends[account_id] = (version, (states[3], states[4], states[5]))
    for account_id, balance in balances.items():
        count, state = ends.get(account_id, (0, (0, 0, 0)))
        actual = (balance.available, balance.on_hold, balance.scale)
        if balance.version != count or state != actual:
            problems.append(
                f"{balance.account.alias}: statement ({count} operations) ends at {state}, "
                f"balance is {actual} at version {balance.version}"
            )
    return problems


def _sum(condition: Q) -> Coalesce:
    return Coalesce(
        Sum("operations__amount", filter=condition), Value(0), output_field=IntegerField()
    )


def check_transactions_balance(ledger: Ledger) -> list[str]:
    """Per transaction: what left sources equals what reached destinations, and the states
    agree with the operations (holds settled on commit, released on cancel)."""
    debit = Q(operations__type="DEBIT", operations__effect__in=["POST", "SETTLE"])
    credit = Q(operations__type="CREDIT", operations__effect="POST")
    rows = (
        Transaction.objects.filter(ledger_id=ledger.pk)
        .annotate(
            debits=_sum(debit),
            credits=_sum(credit),
            held=_sum(Q(operations__effect="HOLD")),
            settled=_sum(Q(operations__effect="SETTLE")),
            released=_sum(Q(operations__effect="RELEASE")),
        )
        .values_list(
            "id",
            "status",
            "is_reversal",
            "amount",
            "debits",
            "credits",
            "held",
            "settled",
            "released",
            "parent_id",
        )
    )
    problems = []
    released_by_parent: dict[object, int] = {}
    held_by_id: dict[object, int] = {}
    for pk, status, reversal, amount, debits, credits, held, settled, released, parent in rows:
        if debits != credits:
            problems.append(f"transaction {pk}: debits {debits} != credits {credits}")
        if status == Transaction.SENT and not released and debits != amount:
            problems.append(f"transaction {pk}: moved {debits}, amount is {amount}")
        if status == Transaction.PRE_APPROVED and (held != amount or settled or debits):
            problems.append(f"transaction {pk}: PRE_APPROVED but holds {held} of {amount}")
        if held and status == Transaction.SENT and settled != held:
            problems.append(f"transaction {pk}: committed with {settled} of {held} settled")
        if status == Transaction.CREATED:
            problems.append(f"transaction {pk}: left in CREATED")
        if reversal and released:
            released_by_parent[parent] = released
        if status == Transaction.CANCELED:
            held_by_id[pk] = held
    for pk, held in held_by_id.items():
        if released_by_parent.get(pk) != held:
            problems.append(f"transaction {pk}: CANCELED but its holds were not all released")
    return problems


def check_reversals(ledger: Ledger) -> list[str]:
    bad = Transaction.objects.filter(ledger_id=ledger.pk, is_reversal=True).filter(
        Q(parent__isnull=True) | Q(parent__is_reversal=True)
    )
    return [f"transaction {t.pk}: a reversal without a revertible parent" for t in bad]


CHECKS: list[tuple[str, Callable[[Ledger], list[str]]]] = [
    ("balances sum to zero per asset", check_sums_to_zero),
    ("no negative balance outside external accounts", check_no_negative_balance),
    ("statements replay to balances", check_statements_replay),
    ("every transaction's debits equal its credits; states agree", check_transactions_balance),
    ("reversals point at revertible transactions", check_reversals),
]


def ledger_check(ledger: Ledger, *, progress: Callable[[str], None] | None = None) -> LedgerReport:
    """Run every check on one snapshot of the ledger (on PostgreSQL a REPEATABLE READ, read-only
    transaction), so that postings landing meanwhile cannot show as violations. Called inside a
    caller's transaction, the checks share that transaction's view instead."""
    report = LedgerReport(ledger=ledger)
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if outermost and connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        for name, check in CHECKS:
            if progress:
                progress(name)
            report.checks.append(name)
            report.violations += [f"ledger {ledger.pk}: {v}" for v in check(ledger)]
    return report
