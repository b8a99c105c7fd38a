"""``make bench`` (``python -m bench.run``): start the service under gunicorn on its own
PostgreSQL database, load it, print a table and write ``bench/results/latest.json``.

Scenarios, in one run so that every ratio compares figures measured together:

- floor: the bench-only raw-SQL transfer (``bench/floor.py``), the reference for the rest;
- spread, hot, pending (then commit), revert: postings over HTTP, driven by wrk + Lua; the
  floor, spread and hot run in interleaved slices (``bench/slices.py``);
- fixed: 100 requests/s of spread postings, open loop (``bench/httpload.py``): p50/p95/p99;
- batch: atomic batches of transfers; pgbench: the same transfer in SQL, the ceiling;
- engine_spread, engine_hot, engine_spread_no_outbox: the engine in-process, no HTTP
  (``bench.engine_rate``); the outbox's pair, with and without events, in interleaved slices;
- scale: a million transfers bulk-loaded through SQL (``bench/load.py``), then the floor,
  spread and hot (interleaved, as before the load) and fixed again, and the first against the
  1,000th page of the transaction list.

``check_ledger``'s checks run after every scenario; a violation fails the run. ``--smoke`` runs
every step with tiny numbers (the test suite does, in tests/performance).
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bench.config import Config, parse
from bench.cpu_meter import CpuMeter
from bench.database import migrate, recreate_database, setup_django
from bench.httpload import Scenario, Target, closed_loop, fixed_rate
from bench.pages import page_times
from bench.report import INTERLEAVED, OUTBOX_PAIR, ROUND, print_table, targets_of
from bench.slices import combine
from bench.tools import gunicorn, pgbench, wrk

HERE = Path(__file__).resolve().parent


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class Bench:
    def __init__(self, config: Config) -> None:
        self.config = config
        self.results: dict[str, Any] = {}
        self.checks: list[dict[str, Any]] = []

    # -- measuring -----------------------------------------------------------------------

    def load(
        self,
        name: str,
        seconds: float | None = None,
        connections: int | None = None,
        *,
        histogram: bool = False,
    ) -> dict[str, Any]:
        seconds = seconds or self.config.seconds
        connections = connections or self.config.connections
        extra: list[str] = []
        if name == "floor":
            extra = [self.target.floor_path]
        if name == "batch":
            extra = [str(self.config.batch_size)]
        with CpuMeter() as meter:
            if self.config.load_generator == "wrk":
                result = wrk(
                    HERE / "wrk",
                    name,
                    port=self.config.port,
                    seconds=seconds,
                    connections=connections,
                    args=[
                        str(self.target.accounts),
                        self.target.token,
                        self.target.ledger_path,
                        *extra,
                    ],
                    histogram=histogram,
                )
            else:
                scenario = Scenario(name, self.target, batch_size=self.config.batch_size)
                run = closed_loop(scenario, self.target, connections=connections, seconds=seconds)
                result = {**run.summary(), "generator": f"python closed loop x{connections}"}
        counts = result["counts"]
        if name == "pending":
            result["unit"] = "pending+commit pairs/s"
            result["units_per_s"] = round(counts.get("commits", 0) / result["seconds"], 1)
        elif name == "revert":
            result["unit"] = "post+revert pairs/s"
            result["units_per_s"] = round(counts.get("reverts", 0) / result["seconds"], 1)
        elif name == "batch":
            ok = result["requests"] - result["status_errors"] - result["errors"]
            result["unit"] = f"transfers/s (atomic batches of {self.config.batch_size})"
            result["units_per_s"] = round(ok * self.config.batch_size / result["seconds"], 1)
        else:
            result["unit"] = "postings/s"
            result["units_per_s"] = round(
                (result["requests"] - result["status_errors"] - result["errors"])
                / result["seconds"],
                1,
            )
        result["cpu"] = meter.figures(result["units_per_s"] * result["seconds"])
        return result

    def fixed(self, seconds: float | None = None) -> dict[str, Any]:
        scenario = Scenario("spread", self.target)
        cpu = time.process_time()
        run = fixed_rate(
            scenario.next,
            self.target,
            rate=self.config.rate,
            seconds=seconds or self.config.fixed_seconds,
            workers=min(16, self.config.workers * self.config.threads),
        )
        summary = run.summary()
        summary["unit"] = f"postings at a fixed {self.config.rate:g} requests/s"
        summary["units_per_s"] = summary["rps"]
        summary["generator"] = "python open loop (bench/httpload.py)"
        summary["generator_cpu"] = round((time.process_time() - cpu) / run.seconds, 3)
        return summary

    def pages(self) -> dict[str, Any]:
        return page_times(self.target, self.ledger.pk, self.config.page_samples)

    def quiesce(self) -> None:
        """Wait until no request of the load generator is still being served (a client that
        stops may leave requests in flight), so that the check sees a settled ledger."""
        from django.db import connection

        deadline = time.time() + 30
        with connection.cursor() as cursor:
            while time.time() < deadline:
                cursor.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                    "AND pid <> pg_backend_pid() AND state <> 'idle'"
                )
                if cursor.fetchone()[0] == 0:
                    return
                time.sleep(0.1)

    def check(self, after: str, *, rewarm: bool = True) -> None:
        from django.db import connection, transaction

        from transactions.integrity import ledger_check

        self.quiesce()
        started = time.perf_counter()
        with transaction.atomic():
            with connection.cursor() as cursor:  # one snapshot for every check
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            report = ledger_check(self.ledger)
        elapsed = time.perf_counter() - started
        self.checks.append(
            {
                "after": after,
                "ok": report.ok,
                "seconds": round(elapsed, 2),
                "violations": report.violations[:5],
            }
        )
        log(f"  check_ledger after {after}: {'OK' if report.ok else 'VIOLATIONS'} ({elapsed:.1f}s)")
        if not report.ok:
            raise RuntimeError(f"check_ledger failed after {after}: {report.violations[:5]}")
        # The check reads the whole ledger (over a minute with a million transactions), which
        # pushes the postings' pages out of PostgreSQL's cache: a few seconds of postings
        # bring them back before the next scenario is measured, loaded ledger or empty alike.
        if rewarm:
            self.load("spread", seconds=self.config.rewarm)

    def step(self, name: str, result: dict[str, Any], *, check: bool = True) -> dict[str, Any]:
        result.pop("histogram", None)  # read by ``slices.combine``; too long to keep
        cpu = result.get("cpu") or {}
        busy = (
            f"; busy {cpu['busy']:.0%}, CPU ms/unit {cpu['ms_per_unit']}"
            if cpu and cpu.get("busy") is not None
            else ""
        )
        log(
            f"  {name}: {result.get('units_per_s')} {result.get('unit', '')}; "
            f"p99 {result.get('p99_ms', '-')} ms; errors {result.get('errors', 0)}"
            f"+{result.get('status_errors', 0)}{busy}"
        )
        if check:
            self.check(name)
        return result

    def interleaved(self, number: int, suffix: str = "") -> dict[str, dict[str, Any]]:
        """The floor, spread and hot in turn, slice by slice (``bench.slices``), then one check
        of the ledger. The rounds on the loaded ledger run them the same way, so that each
        comparison with the empty ledger is of figures measured alike."""
        return self.in_slices(INTERLEAVED, self.http_slice, number, suffix)

    def http_slice(self, name: str, seconds: float) -> dict[str, Any]:
        """One slice of an HTTP scenario, with its latencies for ``slices.combine``."""
        return self.load(name, seconds=seconds, histogram=True)

    def in_slices(
        self,
        names: tuple[str, ...],
        measure: Callable[[str, float], dict[str, Any]],
        number: int,
        suffix: str = "",
    ) -> dict[str, dict[str, Any]]:
        """``names`` measured in turn, each slice ``seconds / slices`` long, the order turned
        by one each cycle (floor, spread, hot; spread, hot, floor; ...) so that no scenario
        always follows the same one, each one's slices added up (``slices.combine``); then one
        check of the ledger."""
        config = self.config
        seconds = config.seconds / config.slices
        taken: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
        for cycle in range(config.slices):
            turn = cycle % len(names)
            for name in names[turn:] + names[:turn]:
                taken[name].append(measure(name, seconds))
        out = {
            name: self.step(f"{name}{suffix} #{number}", combine(runs), check=False)
            for name, runs in taken.items()
        }
        self.check("+".join(f"{name}{suffix} #{number}" for name in names))
        return out

    def round(self, number: int) -> dict[str, dict[str, Any]]:
        """Every scenario of ``ROUND`` once, in its order; a scenario of a sliced group
        (``INTERLEAVED``, ``OUTBOX_PAIR``) is measured with the rest of its group, in slices."""
        sliced = {INTERLEAVED: self.http_slice, OUTBOX_PAIR: self.engine}
        measured: dict[str, dict[str, Any]] = {}
        for name in ROUND:
            if name in measured:
                continue
            group = next((g for g in sliced if name in g), None)
            if group is None:
                measured[name] = self.step(f"{name} #{number}", self.measure(name))
            else:
                measured |= self.in_slices(group, sliced[group], number)
        return {name: measured[name] for name in ROUND}

    def engine(self, name: str, seconds: float | None = None) -> dict[str, Any]:
        """``engine_spread``, ``engine_hot``, ``engine_spread_no_outbox``: the engine's own
        rate, in-process (``bench.engine_rate``)."""
        from bench.engine_rate import engine_rate

        return engine_rate(
            ledger_id=str(self.ledger.pk),
            accounts=self.config.accounts,
            kind=name.removeprefix("engine_").removesuffix("_no_outbox"),
            seconds=seconds or self.config.seconds,
            outbox=not name.endswith("_no_outbox"),
        )

    def measure(self, name: str) -> dict[str, Any]:
        if name.startswith("engine_"):
            return self.engine(name)
        if name == "fixed":
            return self.fixed()
        if name == "pgbench":
            return pgbench(
                self.config.database_url,
                HERE / "pgbench_transfer.sql",
                clients=self.config.connections,
                seconds=self.config.seconds,
                variables={"ledger": str(self.ledger.pk), "accounts": str(self.config.accounts)},
            )
        if name == "batch":
            return self.load("batch", connections=self.config.batch_connections)
        return self.load(name)

    # -- the run -------------------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        config = self.config
        started = time.time()
        log(f"bench: fresh database {urlsplit(config.database_url).path.lstrip('/')}")
        recreate_database(config.database_url)
        migrate(config.database_url)
        setup_django(config.database_url)
        from bench.load import bulk_load
        from bench.seed import seed_ledger
        from organizations.models import Ledger
        from templates_dsl.models import TransactionTemplate

        seeded = seed_ledger(accounts=config.accounts)
        self.ledger = Ledger.objects.get(pk=seeded.ledger_id)
        self.target = Target(
            host="127.0.0.1",
            port=config.port,
            token=seeded.token,
            ledger_path=seeded.path,
            accounts=config.accounts,
            floor_path=f"/bench/floor/{seeded.ledger_id}",
        )
        log(f"bench: seeded {config.accounts} accounts in {time.time() - started:.0f}s")
        with gunicorn(
            config.database_url, port=config.port, workers=config.workers, threads=config.threads
        ):
            self.load("spread", seconds=config.warmup)
            rounds = []
            for number in range(1, config.repetitions + 1):
                log(f"bench: round {number} of {config.repetitions}")
                rounds.append(self.round(number))
            self.results["rounds"] = rounds
            self.results["pages_before_load"] = self.pages()
            log(f"bench: bulk-loading {config.load_transactions:,} transactions through SQL")
            loaded = time.perf_counter()
            template = TransactionTemplate.objects.get(ledger=self.ledger, code="TRANSFER")
            bulk_load(
                ledger_id=str(self.ledger.pk),
                template_id=str(template.pk),
                accounts=config.accounts,
                transactions=config.load_transactions,
            )
            self.results["load"] = {
                "transactions": config.load_transactions,
                "seconds": round(time.perf_counter() - loaded, 1),
            }
            log(f"  loaded in {self.results['load']['seconds']}s")
            self.check("load", rewarm=False)  # the warm-up below follows
            self.load("spread", seconds=config.warmup)
            self.results["scaled_rounds"] = [
                {
                    **self.interleaved(number, "_scaled"),
                    "fixed": self.step(f"fixed_scaled #{number}", self.fixed()),
                }
                for number in range(1, config.repetitions + 1)
            ]
            self.results["pages"] = self.pages()
            self.check("pages", rewarm=False)  # the last: nothing is measured after it
        return self.report(time.time() - started)

    def report(self, elapsed: float) -> dict[str, Any]:
        r = self.results
        from transactions.models import Transaction

        rounds, scaled = r["rounds"], r["scaled_rounds"]
        targets = targets_of(r)
        runs = [x for one in rounds + scaled for x in one.values()]
        errors = sum(v.get("errors", 0) + v.get("status_errors", 0) for v in runs)
        return {
            "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "seconds": round(elapsed, 1),
            "machine": {
                "cpus": os.cpu_count(),
                "platform": platform.platform(),
                "python": platform.python_version(),
                "postgresql": self._server_version(),
            },
            "config": asdict(self.config),
            "scenarios": r,
            "targets": targets,
            "errors": errors,
            "checks": self.checks,
            "transactions_stored": Transaction.objects.filter(ledger=self.ledger).count(),
        }

    def _server_version(self) -> str:
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute("SHOW server_version")
            return str(cursor.fetchone()[0])


def main(argv: list[str] | None = None) -> int:
    config = parse(argv, __doc__.splitlines()[0])
    bench = Bench(config)
    report = bench.run()
    out = Path(config.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, default=str) + "\n")
    print_table(report)
    print(f"\nwritten: {out}")
    return 1 if report["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
