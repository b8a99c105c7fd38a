"""``make bench`` (``python -m bench.run``): the service under gunicorn on its own PostgreSQL
database; prints the goals' ratios, each of figures of one round (floor, spread and hot, and the
engine with and without events and django-hordak, in interleaved slices, ``bench/slices.py``),
before and after a million transfers are bulk-loaded (``bench/load.py``), with ``check_ledger``
after every scenario; writes ``bench/results/latest.json``. ``--quick``: one round of short
slices on 100,000 loaded transactions, under 5 minutes, indicative. ``--smoke``: tiny numbers."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from bench.cpu_meter import CpuMeter
from bench.database import DEFAULT_URL, fresh, funded_ledger, seed_ledger
from bench.engine_rate import engine_rate
from bench.slices import combine, histogram_of, percentile_ms
from bench.tools import Client, Target, fixed_rate, free_port, gunicorn, hordak, pgbench, wrk

BUSY = """SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
AND pid <> pg_backend_pid() AND state <> 'idle'"""
# A round; a group of more than one scenario runs in interleaved slices.
EMPTY = (("floor", "spread", "hot"), ("pending",), ("revert",), ("fixed",), ("batch",),
         ("pgbench",), ("engine_spread", "engine_spread_no_outbox", "hordak"),
         ("engine_unwatched", "engine_watched"))  # fmt: skip
LOADED = (("floor", "spread", "hot"), ("fixed",))
FULL = {"database_url": DEFAULT_URL, "port": 8150, "accounts": 1000, "seconds": 15.0,
        "slices": 5, "fixed_seconds": 20.0, "rate": 100.0, "connections": 12,
        "batch_size": 100, "batch_connections": 2, "load_transactions": 1_000_000,
        "page_samples": 40, "workers": 12, "threads": 1, "warmup": 20.0, "rewarm": 3.0,
        "repetitions": 3, "hordak_python": "",
        "out": str(Path(__file__).resolve().parent / "results" / "latest.json")}  # fmt: skip
QUICK = {"seconds": 6.0, "slices": 3, "fixed_seconds": 10.0, "load_transactions": 100_000,
         "page_samples": 20, "warmup": 10.0, "rewarm": 2.0, "repetitions": 1}  # fmt: skip
# The tables a posting reads and writes, which the cliff goal keeps unanalyzed until it measures.
CLIFF_TABLES = ("organizations_account", "organizations_balance", "transactions_transaction",
                "transactions_operation", "instruments_instrument")  # fmt: skip
SMOKE = {"repetitions": 2, "accounts": 20, "seconds": 1.0, "slices": 2, "fixed_seconds": 1.5,
         "rate": 20.0, "connections": 2, "batch_size": 10, "batch_connections": 1,
         "load_transactions": 2_000, "page_samples": 2, "workers": 1, "threads": 2,
         "warmup": 0.5, "rewarm": 0.5}  # fmt: skip


def parse(argv: list[str] | None) -> argparse.Namespace:
    """The full run's settings, or the quick or smoke run's, then what the command line says."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one short round, under 5 minutes")
    parser.add_argument("--smoke", action="store_true", help="tiny numbers, for the tests")
    for name, value in FULL.items():
        parser.add_argument(f"--{name.replace('_', '-')}", type=type(value))
    given = vars(parser.parse_args(argv))
    mode = "smoke" if given.pop("smoke") else "quick" if given.pop("quick") else "full"
    preset = {"quick": QUICK, "smoke": SMOKE}.get(mode, {})
    c = argparse.Namespace(**{**FULL, **preset}, mode=mode)
    vars(c).update((k, v) for k, v in given.items() if v is not None)
    if max(c.connections, c.batch_connections) > c.workers * c.threads:
        # each worker thread holds one connection (bench/gunicorn_worker.py): more would wait
        sys.exit(f"{c.connections} connections need at least as many workers x threads.")
    for tool in ("wrk", "pgbench"):
        if shutil.which(tool) is None:
            sys.exit(f"the bench needs {tool}; `make bench` installs wrk (apt-get install wrk).")
    c.port = free_port(c.port)
    return c


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class Bench:
    def __init__(self, config: argparse.Namespace) -> None:
        self.c = config
        self.hordak: Any = None  # django-hordak's measure(seconds), with --hordak-python
        self.results: dict[str, Any] = {}
        self.checks: list[dict[str, Any]] = []

    def load(self, name: str, seconds: float, histogram: bool = False) -> Any:
        """One HTTP scenario under wrk, with the machine's CPU (``bench.cpu_meter``)."""
        c, target = self.c, self.target
        extra = {"floor": [target.floor_path], "batch": [str(c.batch_size)]}.get(name, [])
        args = [str(target.accounts), target.token, target.ledger_path, *extra]
        connections = c.batch_connections if name == "batch" else c.connections
        with CpuMeter() as meter:
            result = wrk(name, port=c.port, seconds=seconds, connections=connections, args=args,
                         histogram=histogram)  # fmt: skip
        counts = result["counts"]
        ok = result["requests"] - result["status_errors"] - result["errors"]
        units, result["unit"] = {
            "pending": (counts.get("commits", 0), "pending+commit pairs/s"),
            "revert": (counts.get("reverts", 0), "post+revert pairs/s"),
            "batch": (ok * c.batch_size, f"transfers/s (atomic batches of {c.batch_size})"),
        }.get(name, (ok, "postings/s"))
        result["units_per_s"] = round(units / result["seconds"], 1)
        result["cpu"] = meter.figures(units)
        return result

    def measure(self, name: str, seconds: float, sliced: bool = False) -> dict[str, Any]:
        c = self.c
        if name == "hordak":
            return dict(self.hordak(seconds))
        if name.startswith("engine_"):
            outbox = not name.endswith("_no_outbox")
            ledger, accounts = self.twins.get(name, (self.ledger, c.accounts))
            return engine_rate([ledger], accounts=accounts, seconds=seconds, outbox=outbox)
        if name == "fixed":
            workers = min(16, c.workers * c.threads)
            run = fixed_rate(self.target, rate=c.rate, seconds=seconds, workers=workers)
            return {**run, "unit": f"postings at {c.rate:g} requests/s", "units_per_s": run["rps"]}
        if name == "pgbench":
            ledger, accounts = str(self.ledger.pk), str(c.accounts)
            return pgbench(c.database_url, clients=c.connections, seconds=seconds, ledger=ledger,
                           accounts=accounts)  # fmt: skip
        return self.load(name, seconds, histogram=sliced)

    def check(self, after: str) -> None:
        """``check_ledger`` in one snapshot, once no request is still being served; then a few
        seconds of postings, since the check pushed the postings' pages out of the cache."""
        from django.db import connection, transaction

        from transactions.integrity import BOOKS_AGAINST_JOURNAL, ledger_check

        started = time.perf_counter()
        with connection.cursor() as cursor:
            for _ in range(300):  # 30 s at most
                cursor.execute(BUSY)
                if not cursor.fetchone()[0]:
                    break
                time.sleep(0.1)
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            # The floor endpoint and the bulk loader write rows behind the service, with no
            # events, by design: the books-against-journal check would name each of them.
            report = ledger_check(self.ledger, without={BOOKS_AGAINST_JOURNAL})
        elapsed = time.perf_counter() - started
        self.checks.append({"after": after, "ok": report.ok, "seconds": round(elapsed, 2),
                            "violations": report.violations[:5]})  # fmt: skip
        log(f"  check_ledger after {after}: {'OK' if report.ok else 'VIOLATIONS'} ({elapsed:.1f}s)")
        if not report.ok:
            raise RuntimeError(f"check_ledger failed after {after}: {report.violations[:5]}")
        self.load("spread", self.c.rewarm)

    def round(self, groups: Any, number: int, suffix: str = "") -> dict[str, dict[str, Any]]:
        """Each group, then a check: a scenario alone for its seconds; a group in turns of
        slices, the order turned by one each cycle (floor, spread, hot; spread, hot, floor;
        ...) so that none always follows the same one, each one's slices added up."""
        c, out = self.c, {}
        for group in groups:
            group = tuple(name for name in group if name != "hordak" or self.hordak)
            taken: dict[str, list[dict[str, Any]]] = {name: [] for name in group}
            for cycle in range(c.slices if len(group) > 1 else 0):
                for name in group[cycle % len(group) :] + group[: cycle % len(group)]:
                    taken[name].append(self.measure(name, c.seconds / c.slices, sliced=True))
            if len(group) == 1:
                seconds = c.fixed_seconds if group == ("fixed",) else c.seconds
                taken[group[0]].append(self.measure(group[0], seconds))
            for name, runs in taken.items():
                result = out[name] = combine(runs) if len(runs) > 1 else runs[0]
                result.pop("histogram", None)  # read by ``slices.combine``; too long to keep
                cpu = result.get("cpu") or {}
                log(f"  {name}{suffix} #{number}: {result['units_per_s']} {result['unit']}; p99 "
                    f"{result.get('p99_ms')} ms; errors {result['errors']}+"
                    f"{result['status_errors']}; busy {cpu.get('busy')}")  # fmt: skip
            self.check("+".join(f"{name}{suffix} #{number}" for name in group))
        return out

    def pages(self) -> dict[str, Any]:
        """The median time of page 1 and page 1,000 (limit 100) of the transaction list, over
        ``page_samples`` requests each after two unmeasured ones."""
        from django.db import connection

        from ledgerproject.api.pagination import encode_cursor

        with connection.cursor() as cursor:
            cursor.execute("SELECT created_at, id FROM transactions_transaction WHERE "
                           "ledger_id = %s ORDER BY created_at, id OFFSET 99899 LIMIT 1",
                           [self.ledger.pk])  # fmt: skip
            row = cursor.fetchone()
        client, times = Client(self.target), {}
        deep = f"&cursor={encode_cursor(row[0], row[1])}" if row else ""  # else: a smoke run
        for page, query in (("page_1", ""), ("page_1000" if row else "page_last", deep)):
            samples = []
            for _ in range(self.c.page_samples + 2):
                started = time.perf_counter()
                path = f"{self.target.ledger_path}/transactions?limit=100{query}"
                status, body = client.send("GET", path)
                if status != 200 or len(json.loads(body)) != 100:
                    raise RuntimeError(f"{page} answered {status}: {body[:200]!r}")
                samples.append((time.perf_counter() - started) * 1000)
            times[f"{page}_ms"] = percentile_ms(histogram_of(samples[2:]), 50)
        client.connection.close()  # a gunicorn worker holds one (bench/gunicorn_worker.py)
        first, later = times.values()
        return {**times, "ratio": round(later / first, 3)}

    def cliff(self) -> dict[str, Any]:
        """The engine's spread rate on a ledger whose accounts were created and funded on
        tables never analyzed (a new deployment's), then the same after ANALYZE (not VACUUM:
        only the statistics differ); each after unmeasured postings, so that both run with the
        process's copies warm. Autovacuum is off for the tables meanwhile (where it is on, it
        would analyze them mid-run), and the run stops if they were analyzed all the same."""
        from django.db import connection

        c, out = self.c, {}
        tables = ", ".join(f"'{table}'" for table in CLIFF_TABLES)
        with connection.cursor() as cursor:
            for table in CLIFF_TABLES:
                cursor.execute(f"ALTER TABLE {table} SET (autovacuum_enabled = off)")
        ledger = funded_ledger("Cliff", c.accounts)
        for name in ("no_statistics", "analyzed"):
            if name == "analyzed":
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_stat_force_next_flush()")  # this session's counts
                    cursor.execute("SELECT sum(analyze_count + autoanalyze_count) FROM "
                                   f"pg_stat_user_tables WHERE relname IN ({tables})")  # fmt: skip
                    if cursor.fetchone()[0]:
                        raise RuntimeError("cliff: the tables were analyzed before ANALYZE")
                    for table in CLIFF_TABLES:
                        cursor.execute(f"ALTER TABLE {table} RESET (autovacuum_enabled)")
                    cursor.execute("ANALYZE")
            engine_rate([ledger], accounts=c.accounts, seconds=c.rewarm)
            out[name] = engine_rate([ledger], accounts=c.accounts, seconds=c.seconds)
            log(f"  cliff, {name}: {out[name]['units_per_s']} {out[name]['unit']}")
        return out

    def run(self) -> dict[str, Any]:
        c, started = self.c, time.time()
        log(f"bench ({c.mode}): a fresh database at {c.database_url}")
        fresh(c.database_url)
        from bench.load import bulk_load
        from organizations.models import Ledger

        self.results["cliff"] = self.cliff()
        seeded = seed_ledger(accounts=c.accounts)
        self.ledger = Ledger.objects.select_related("organization").get(pk=seeded["ledger_id"])
        floor = f"/bench/floor/{seeded['ledger_id']}"
        self.target = Target(c.port, seeded["token"], seeded["path"], c.accounts, floor)
        # Twin ledgers, alike but for a balance monitor on every account of the watched one; 200
        # accounts each keep four threads' postings apart and the seeding short.
        n = min(c.accounts, 200)
        self.twins = {f"engine_{name}": (funded_ledger(name, n, watched=name == "watched"), n)
                      for name in ("unwatched", "watched")}  # fmt: skip
        log(f"bench: migrated and seeded {c.accounts} accounts in {time.time() - started:.0f}s")
        with contextlib.ExitStack() as stack:
            if c.hordak_python:
                self.hordak = stack.enter_context(hordak(c.hordak_python, c.database_url))
            sizes = {"port": c.port, "workers": c.workers, "threads": c.threads}
            stack.enter_context(gunicorn(c.database_url, **sizes))
            self.load("spread", c.warmup)
            rounds = [self.round(EMPTY, n) for n in range(1, c.repetitions + 1)]
            log(f"bench: bulk-loading {c.load_transactions:,} transactions through SQL")
            loaded = time.perf_counter()
            bulk_load(ledger_id=str(self.ledger.pk), accounts=c.accounts,
                      transactions=c.load_transactions)  # fmt: skip
            seconds = round(time.perf_counter() - loaded, 1)
            self.results["load"] = {"transactions": c.load_transactions, "seconds": seconds}
            self.check("load")
            self.load("spread", c.warmup)
            scaled = [self.round(LOADED, n, "_scaled") for n in range(1, c.repetitions + 1)]
            # the last: the pages read, the check after fixed_scaled saw the last write
            self.results |= {"rounds": rounds, "scaled_rounds": scaled, "pages": self.pages()}
        from django.db import connection

        from transactions.models import Transaction

        r, version = self.results, connection.pg_version  # type: ignore[attr-defined]
        runs = [x for one in r["rounds"] + r["scaled_rounds"] for x in one.values()]
        return {
            "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "seconds": round(time.time() - started),
            "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                        "python": platform.python_version(), "postgresql": version},
            "config": vars(c), "scenarios": r, "targets": targets_of(r, c.load_transactions),
            "errors": sum(v.get("errors", 0) + v.get("status_errors", 0) for v in runs),
            "checks": self.checks,
            "transactions_stored": Transaction.objects.filter(ledger=self.ledger).count(),
        }  # fmt: skip


def spread_of(values: list[float]) -> float:
    """How far the rounds disagree: (largest - smallest) / median."""
    middle = statistics.median(values)
    return round((max(values) - min(values)) / middle, 3) if middle else 0.0


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The median of the rounds, their spread, each round's rate, and the median CPU per unit
    by process group with the machine's share busy in each round."""
    rates, first = [run["units_per_s"] for run in runs], runs[0]
    out = {"unit": first["unit"], "units_per_s": round(statistics.median(rates), 1),
           "errors": sum(run["errors"] for run in runs), "spread": spread_of(rates),
           "status_errors": sum(run["status_errors"] for run in runs), "runs": rates}  # fmt: skip
    for key in ("p50_ms", "p99_ms"):
        out[key] = statistics.median(run[key] for run in runs) if first.get(key) else None
    if cpus := [run["cpu"] for run in runs if run.get("cpu")]:
        out["busy"], units = [cpu["busy"] for cpu in cpus], [cpu["ms_per_unit"] for cpu in cpus]
        out["cpu_ms_per_unit"] = {
            g: round(statistics.median(u[g] for u in units), 2) for g in units[0]
        }
    return out


def targets_of(r: dict[str, Any], loaded: int) -> list[dict[str, Any]]:
    """Summarize every scenario into ``r`` and answer the goals: each ratio computed within
    each round, then the median of the rounds."""
    rounds, scaled = r["rounds"], r["scaled_rounds"]
    r |= {name: summarize([one[name] for one in rounds]) for name in rounds[0]}
    r |= {f"{name}_scaled": summarize([one[name] for one in scaled]) for name in scaled[0]}

    def per(a: str, b: str, key: str = "units_per_s", top: Any = rounds) -> list[float]:
        return [round(x[a][key] / y[b][key], 3) for x, y in zip(top, rounds, strict=True)]

    n = "1M" if loaded == 1_000_000 else f"{loaded:,}"
    sc, e = scaled, "engine_spread"
    hordak = per(e, "hordak") if "hordak" in rounds[0] else []
    goals = [
        ("single posting / floor (throughput)", per("spread", "floor"), ">=", 0.8),
        ("hot account / spread (throughput)", per("hot", "spread"), ">=", 0.8),
        ("p99 at 100 requests/s (ms)", [one["fixed"]["p99_ms"] for one in rounds], "<=", 25.0),
        (f"{n} stored: throughput / empty", per("spread", "spread", top=sc), ">=", 0.85),
        (f"{n} stored: p99 / empty, fixed rate", per("fixed", "fixed", "p99_ms", sc), "<=", 1.2),
        (f"{n} stored: p99 / empty, saturated", per("spread", "spread", "p99_ms", sc), "<=", 1.2),
        ("page 1,000 / page 1 (median time)", [r["pages"]["ratio"]], "<=", 1.2),
        ("batch / pgbench (transfers/s)", per("batch", "pgbench"), ">=", 0.5),
        ("outbox: with / without events", per(e, f"{e}_no_outbox"), ">=", 0.8),
        ("balance monitors: watched / unwatched", per("engine_watched", "engine_unwatched"), ">=",
         0.95),
        ("the engine / django-hordak, in-process", hordak, ">=", 1.0),
        ("never analyzed / analyzed (engine spread)", [round(
            r["cliff"]["no_statistics"]["units_per_s"] / r["cliff"]["analyzed"]["units_per_s"], 3
        )], ">=", 0.8),
    ]  # fmt: skip
    out = []
    for name, values, op, goal in (goal for goal in goals if goal[1]):
        value, spread = round(statistics.median(values), 3), spread_of(values)
        met = value >= goal if op == ">=" else value <= goal
        out.append({"name": name, "value": value, "op": op, "target": goal, "met": met,
                    "values": values, "spread": spread, "warning": spread > 0.15})  # fmt: skip
    return out


def print_table(report: dict[str, Any]) -> None:
    s, c = report["scenarios"], report["config"]
    lines = [f"{'scenario':<24} {'median':>9}  {'unit':<40} {'p50 ms':>7} {'p99 ms':>7} "
             f"{'errors':>6} {'x floor':>7} {'spread':>6}  CPU ms per unit; busy"]  # fmt: skip
    for name in [*s["rounds"][0], *(f"{name}_scaled" for name in s["scaled_rounds"][0])]:
        row, x_floor = s[name], s[name]["units_per_s"] / s["floor"]["units_per_s"]
        p50, p99 = ("-" if row[k] is None else f"{row[k]:.1f}" for k in ("p50_ms", "p99_ms"))
        cpu = [f"{g} {v:.2f}" for g, v in row.get("cpu_ms_per_unit", {}).items()]
        cpu[-1:] = [f"{cpu[-1]}; busy", *(f"{b:.0%}" for b in row["busy"])] if cpu else []
        lines.append(f"{name:<24} {row['units_per_s']:>9.1f}  {row['unit'][:40]:<40} {p50:>7} "
                     f"{p99:>7} {row['errors'] + row['status_errors']:>6} {x_floor:>7.2f} "
                     f"{row['spread']:>6.0%}  {' '.join(cpu)}")  # fmt: skip
    pages = ", ".join(f"{k} {v}" for k, v in s["pages"].items())
    load = f"bulk load: {s['load']['transactions']:,} transactions in {s['load']['seconds']}s"
    lines += ["", f"transaction list, limit 100, median ms: {pages}", load, "",
              f"{'goal (median of the rounds)':<46}     value  goal     met  spread"]  # fmt: skip
    for t in report["targets"]:
        warn = "  WARNING: the rounds disagree by more than 15 %" if t["warning"] else ""
        lines.append(f"{t['name']:<46} {t['value']:>9}  {t['op']} {t['target']:<5} "
                     f"{'yes' if t['met'] else 'NO '} {t['spread']:>6.0%}{warn}")  # fmt: skip
    if "hordak" not in s["rounds"][0]:
        lines.append("the engine / django-hordak: not measured (--hordak-python; make bench does)")
    lines += ["", f"errors: {report['errors']}; check_ledger passed after every scenario "
              f"({len(report['checks'])} checks); {report['transactions_stored']:,} transactions "
              f"stored; run took {report['seconds']} s on {os.cpu_count()} CPUs"]  # fmt: skip
    if c["mode"] == "quick":
        lines.append(f"QUICK: one round of {c['seconds']:g} s scenarios on "
                     f"{c['load_transactions']:,} loaded transactions: the figures are "
                     "indicative; the full `make bench` decides the goals.")  # fmt: skip
    print("\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    config = parse(argv)
    report = Bench(config).run()
    Path(config.out).parent.mkdir(parents=True, exist_ok=True)
    Path(config.out).write_text(json.dumps(report, indent=2, default=str) + "\n")
    print_table(report)
    print(f"\nwritten: {config.out}")
    return 1 if report["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
