"""CPU per posting, in-process: ``python -m bench.cpu [N] [ROUNDS] [--statements]``.

Builds a fresh database (``ledger_bench_cpu``), seeds 1,000 accounts, then alternates ROUNDS
times N floor transfers (``bench/floor.py``) and N spread postings through the whole Django
stack (test client, middleware, DRF, authentication, the engine, rendering), one thread. For
each it reads the CPU time of this process and of its PostgreSQL backend (``/proc``), and
prints the medians per posting and the floor / spread ratio of their sums: the cost the HTTP
bench divides by, without HTTP, gunicorn or a load generator, and steadier than a throughput.

``--statements``: also PostgreSQL's own time per statement (planning and execution, in
microseconds per call), from ``pg_stat_statements`` when the server preloads it."""

from __future__ import annotations

import json
import os
import random
import statistics
import sys
import time
from collections.abc import Callable

from bench.cpu_meter import cpu_seconds
from bench.database import DEFAULT_URL, migrate, recreate_database, setup_django

URL = DEFAULT_URL.replace("ledger_bench", "ledger_bench_cpu")


def main(argv: list[str]) -> None:
    args = [a for a in argv if not a.startswith("--")]
    count = int(args[0]) if args else 1000
    rounds = int(args[1]) if len(args) > 1 else 3
    statements = "--statements" in argv
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ledgerproject.settings_bench")
    recreate_database(URL)
    migrate(URL)
    setup_django(URL)
    from django.db import connection
    from django.test import Client

    from bench.seed import seed_ledger

    seeded = seed_ledger(accounts=1000)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]
    client = Client(HTTP_AUTHORIZATION=f"Bearer {seeded.token}")
    rng = random.Random(7)

    def backend_cpu() -> float:
        with open(f"/proc/{backend}/stat") as stat:
            return cpu_seconds(stat.read())

    def pair() -> tuple[str, str]:
        a, b = rng.sample(range(1, seeded.accounts + 1), 2)
        return f"@b{a}", f"@b{b}"

    def floor() -> None:
        source, destination = pair()
        body = {"source": source, "destination": destination, "amount": 100}
        response = client.post(
            f"/bench/floor/{seeded.ledger_id}", json.dumps(body), content_type="application/json"
        )
        assert response.status_code == 201, response.content

    def spread() -> None:
        source, destination = pair()
        variables = {"amount": 100, "source": source, "destination": destination}
        body = {"transactionTypeCode": "TRANSFER", "variables": variables}
        response = client.post(
            f"{seeded.path}/transactions", json.dumps(body), content_type="application/json"
        )
        assert response.status_code == 201, response.content

    kinds: dict[str, Callable[[], None]] = {"floor": floor, "spread": spread}
    for run in kinds.values():
        for _ in range(200):
            run()
    if statements and not _reset_statements():
        statements = False
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in kinds}
    for _ in range(rounds):
        for name, run in kinds.items():
            python, database = time.process_time(), backend_cpu()
            for _ in range(count):
                run()
            results[name].append(
                (
                    (time.process_time() - python) * 1000 / count,
                    (backend_cpu() - database) * 1000 / count,
                )
            )
    print(f"CPU per posting, ms (median of {rounds} rounds of {count}; one thread, in-process)")
    for name, rows in results.items():
        python = statistics.median(r[0] for r in rows)
        database = statistics.median(r[1] for r in rows)
        each = ", ".join(f"{p + d:.2f}" for p, d in rows)
        print(f"  {name:7s} Python {python:.2f}  PostgreSQL {database:.2f}  "
              f"total {python + database:.2f}  (rounds: {each})")  # fmt: skip
    ratios = [sum(f) / sum(s) for f, s in zip(results["floor"], results["spread"], strict=True)]
    print(f"  floor / spread (CPU): {statistics.median(ratios):.3f} "
          f"(rounds: {', '.join(f'{r:.3f}' for r in ratios)})")  # fmt: skip
    if statements:
        _print_statements()


def _reset_statements() -> bool:
    """Start counting; False (and why, on stderr) when the server does not preload the module."""
    from django.db import DatabaseError, connection

    try:
        with connection.cursor() as cursor:
            cursor.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            cursor.execute("SET pg_stat_statements.track = 'all'")
            cursor.execute("SET pg_stat_statements.track_planning = on")
            cursor.execute("SELECT pg_stat_statements_reset()")
    except DatabaseError as error:
        print(
            "--statements needs pg_stat_statements in the server's shared_preload_libraries "
            f"(a restart); measuring without it: {error}".strip(),
            file=sys.stderr,
        )
        return False
    return True


def _print_statements() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT calls, round((total_plan_time / calls * 1000)::numeric), "
            "round((total_exec_time / calls * 1000)::numeric), "
            "left(regexp_replace(query, '\\s+', ' ', 'g'), 90) FROM pg_stat_statements "
            "WHERE calls > 0 AND dbid = (SELECT oid FROM pg_database "
            "WHERE datname = current_database()) "
            "ORDER BY total_exec_time + total_plan_time DESC LIMIT 20"
        )
        print("  calls  plan us  exec us  statement")
        for calls, plan, execute, query in cursor.fetchall():
            print(f"  {calls:5d}  {plan:7}  {execute:7}  {query}")


if __name__ == "__main__":
    main(sys.argv[1:])
