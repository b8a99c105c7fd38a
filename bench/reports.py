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

from bench import database

# The bench's own setup, in one statement (the service places accounts one at a time,
# organizations/account_tree.py): five levels for 10,000 accounts.
TREE = """UPDATE organizations_account child SET parent_account_id = parent.id
FROM organizations_account parent
WHERE child.ledger_id = %s AND parent.ledger_id = %s
  AND child.alias ~ '^@b[0-9]+$' AND child.alias <> '@b1'
  AND parent.alias = '@b' || greatest(substr(child.alias, 3)::int / 10, 1)"""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    url = "postgres://postgres@127.0.0.1:5432/ledger_bench_reports"
    parser.add_argument("--database-url", default=url)
    for name, default in (("accounts", 1000), ("transactions", 1_000_000), ("repetitions", 3)):
        parser.add_argument(f"--{name}", type=int, default=default)
    args = parser.parse_args(argv)
    database.fresh(args.database_url)
    from django.db import connection
    from django.db.models import Max, Min

    from bench.load import bulk_load
    from organizations import rollups as now
    from organizations.models import Account
    from transactions import reports, rollups, selectors
    from transactions.models import Operation

    # Statistics gathered once the ledger is funded, before the load, as the bench's own run
    # has them: the double-entry checks at the load's commit are planned once per session, and
    # a plan made for empty tables visits every operation for each one loaded.
    ledger, n = database.funded_ledger("Reports", args.accounts, bench=True), args.accounts
    database.settle()
    started = time.perf_counter()
    bulk_load(ledger_id=str(ledger.pk), accounts=n, transactions=args.transactions)
    database.settle()
    print(f"loaded {args.transactions:,} transfers among {n:,} accounts in "
          f"{time.perf_counter() - started:.0f} s")  # fmt: skip
    span = Operation.objects.filter(ledger_id=ledger.pk).aggregate(
        first=Min("effective_at"), last=Max("effective_at")
    )
    last, middle = span["last"], span["first"] + (span["last"] - span["first"]) / 2
    (asset,) = reports.trial_balance(ledger, last).assets
    assert asset.total("debits") == asset.total("credits")
    b1 = Account.objects.get(ledger_id=ledger.pk, alias="@b1")
    rows = list(selectors.statement_of(b1).filter(effective_at__gte=middle)
                .order_by("effective_at", "id")[:100])  # fmt: skip
    count = Operation.objects.filter(account_id=b1.pk).count()
    with connection.cursor() as cursor:
        cursor.execute(TREE, [ledger.pk, ledger.pk])
    assert now.rolled_up_now(ledger, [b1.pk])[b1.pk]["BRL"]["available"] == n * 10**12
    first = Account.objects.filter(ledger_id=ledger.pk).order_by("created_at", "id")[:100]
    page = [account.pk for account in first]
    timed = {
        "trial balance, now": lambda: reports.trial_balance(ledger, last),
        "period report, the last half": lambda: reports.period_report(ledger, middle, last),
        f"balance effective half-way ({count:,} operations)":
            lambda: selectors.balance_at(b1, at=middle, as_of=last),
        "statement in effective order, a page half-way":
            lambda: selectors.statement_in_effective_order(b1, rows),
        f"rolled-up balance of a tree of {n:,} accounts, now":
            lambda: now.rolled_up_now(ledger, [b1.pk]),
        f"rolled-up balance of a tree of {n:,} accounts, effective half-way":
            lambda: rollups.rolled_up(ledger, [b1.pk], at=middle, now=last),
        "a page of 100 accounts' rolled-up balances, now":
            lambda: now.rolled_up_now(ledger, page),
    }  # fmt: skip
    for label, work in timed.items():
        seconds: list[float] = []
        for _ in range(args.repetitions):
            started = time.perf_counter()
            work()
            seconds.append(time.perf_counter() - started)
        runs = ", ".join(f"{s:.2f}" for s in seconds)
        print(f"{label:<66} {statistics.median(seconds) * 1000:10.1f} ms  (runs: {runs} s)")


if __name__ == "__main__":
    main()
