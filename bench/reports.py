"""``python -m bench.reports``: how long the books by effective date take on a large ledger.
A fresh PostgreSQL database, a ledger of ``--accounts`` funded accounts and ``--transactions``
bulk-loaded transfers (``bench/load.py``), then, each timed ``--repetitions`` times (median
printed): the trial balance now, a period report over the last half of the transfers, and one
account's balance effective half-way through its history and its statement in effective order
half-way through; then, every account made one tree (``@b<n>`` under ``@b<n // 10>``, the
first nine under ``@b1``), the rolled-up balance of its root now and effective half-way, and a
page of 100 accounts with their rolled-up balances. docs/TIME.md and docs/ACCOUNT-TREES.md say
what each computes."""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

from bench import database


def _timed(label: str, work: Callable[[], Any], repetitions: int) -> float:
    seconds = []
    for _ in range(repetitions):
        started = time.perf_counter()
        work()
        seconds.append(time.perf_counter() - started)
    median = statistics.median(seconds)
    print(
        f"{label:<58} {median * 1000:10.1f} ms  (runs: {', '.join(f'{s:.2f}' for s in seconds)} s)"
    )
    return median


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--database-url", default="postgres://postgres@127.0.0.1:5432/ledger_bench_reports"
    )
    parser.add_argument("--accounts", type=int, default=1000)
    parser.add_argument("--transactions", type=int, default=1_000_000)
    parser.add_argument("--repetitions", type=int, default=3)
    args = parser.parse_args()

    database.fresh(args.database_url)
    from django.db.models import Max, Min

    from bench.load import bulk_load
    from organizations import rollups as rollups_now
    from organizations.models import Account
    from transactions import reports, rollups, selectors
    from transactions.models import Operation

    # Statistics gathered once the ledger is funded, before the load, as the bench's own run
    # has them: the double-entry checks at the load's commit are planned once per session, and
    # a plan made for empty tables visits every operation for each one loaded.
    ledger = database.funded_ledger("Reports", args.accounts, bench=True)
    database.settle()
    started = time.perf_counter()
    bulk_load(ledger_id=str(ledger.pk), accounts=args.accounts, transactions=args.transactions)
    database.settle()
    print(
        f"loaded {args.transactions:,} transfers among {args.accounts:,} accounts in "
        f"{time.perf_counter() - started:.0f} s"
    )
    span = Operation.objects.filter(ledger_id=ledger.pk).aggregate(
        first=Min("effective_at"), last=Max("effective_at")
    )
    middle = span["first"] + (span["last"] - span["first"]) / 2
    repetitions = args.repetitions
    trial = reports.trial_balance(ledger, span["last"])
    (asset,) = trial.assets
    assert asset.total("debits") == asset.total("credits")
    _timed("trial balance, now", lambda: reports.trial_balance(ledger, span["last"]), repetitions)
    _timed(
        "period report, the last half",
        lambda: reports.period_report(ledger, middle, span["last"]),
        repetitions,
    )
    account = Account.objects.get(ledger_id=ledger.pk, alias="@b1")
    count = Operation.objects.filter(account_id=account.pk).count()
    _timed(
        f"balance effective half-way ({count:,} operations)",
        lambda: selectors.balance_at(account, at=middle, as_of=span["last"]),
        repetitions,
    )
    rows = list(
        selectors.statement_of(account)
        .filter(effective_at__gte=middle)
        .order_by("effective_at", "id")[:100]
    )
    _timed(
        "statement in effective order, a page half-way",
        lambda: selectors.statement_in_effective_order(account, rows),
        repetitions,
    )
    _tree(ledger, args.accounts)
    root = Account.objects.get(ledger_id=ledger.pk, alias="@b1")
    whole = rollups_now.rolled_up_now(ledger, [root.pk])[root.pk]
    assert whole["BRL"]["available"] == args.accounts * 10**12, whole  # transfers move, not make
    _timed(
        f"rolled-up balance of a tree of {args.accounts:,} accounts, now",
        lambda: rollups_now.rolled_up_now(ledger, [root.pk]),
        repetitions,
    )
    _timed(
        f"rolled-up balance of a tree of {args.accounts:,} accounts, effective half-way",
        lambda: rollups.rolled_up(ledger, [root.pk], at=middle, now=span["last"]),
        repetitions,
    )
    page = list(Account.objects.filter(ledger_id=ledger.pk).order_by("created_at", "id")[:100])
    _timed(
        "a page of 100 accounts' rolled-up balances, now",
        lambda: rollups_now.rolled_up_now(ledger, [row.pk for row in page]),
        repetitions,
    )


def _tree(ledger: Any, accounts: int) -> None:
    """``@b<n>`` under ``@b<n // 10>`` (the first nine under ``@b1``): a tree of every bench
    account, five levels for 10,000, written in one statement (the bench's own setup; the
    service places accounts one at a time, organizations/account_tree.py)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(TREE, [ledger.pk, ledger.pk])
    print(f"made a tree of {accounts:,} accounts")


TREE = """UPDATE organizations_account child SET parent_account_id = parent.id
FROM organizations_account parent
WHERE child.ledger_id = %s AND parent.ledger_id = %s
  AND child.alias ~ '^@b[0-9]+$' AND child.alias <> '@b1'
  AND parent.alias = '@b' || greatest(substr(child.alias, 3)::int / 10, 1)"""


if __name__ == "__main__":
    main()
