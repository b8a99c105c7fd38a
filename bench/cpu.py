"""CPU per posting, in-process: ``python -m bench.cpu [N] [ROUNDS]``. Seeds ``ledger_bench_cpu``
(1,000 accounts), then alternates ROUNDS times N floor transfers and N spread postings through
the whole stack (``bench.instructions.postings``), one thread, and prints the medians of this
process's CPU and its PostgreSQL backend's (``/proc``, kernel time included) per posting and
the floor / spread ratio: what the HTTP bench divides by, steadier than a throughput."""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from bench.cpu_meter import cpu_seconds
from bench.database import DEFAULT_URL, fresh, seed_ledger
from bench.instructions import postings


def main(argv: list[str]) -> None:
    count, rounds = map(int, (argv + ["1000", "3"][len(argv) :])[:2])
    fresh(DEFAULT_URL.replace("ledger_bench", "ledger_bench_cpu"))
    kinds = postings(seed_ledger(accounts=1000))
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        stat = Path(f"/proc/{cursor.fetchone()[0]}/stat")
    for run in [*kinds.values()] * 200:  # warm-up
        run()
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in kinds}
    for _ in range(rounds):
        for name, run in kinds.items():
            python, database = time.process_time(), cpu_seconds(stat.read_text())
            for _ in range(count):
                run()
            database = cpu_seconds(stat.read_text()) - database
            results[name].append(((time.process_time() - python) * 1000 / count,
                                  database * 1000 / count))  # fmt: skip
    print(f"CPU per posting, ms (median of {rounds} rounds of {count}; one thread, in-process)")
    for name, rows in results.items():
        python, database = (statistics.median(r[i] for r in rows) for i in (0, 1))
        each = ", ".join(f"{p + d:.2f}" for p, d in rows)
        print(f"  {name:7s} Python {python:.2f}  PostgreSQL {database:.2f}  "
              f"total {python + database:.2f}  (rounds: {each})")  # fmt: skip
    ratios = [sum(f) / sum(s) for f, s in zip(results["floor"], results["spread"], strict=True)]
    print(f"  floor / spread (CPU): {statistics.median(ratios):.3f} "
          f"(rounds: {', '.join(f'{r:.3f}' for r in ratios)})")  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1:])
