"""``make bench`` (``python -m bench.run``): start the service under gunicorn on its own
PostgreSQL database, load it, print a table and write ``bench/results/latest.json``.

Scenarios, in one run so that every ratio compares figures measured together:

- floor: the bench-only raw-SQL transfer (``bench/floor.py``), the reference for the rest;
- spread, hot, pending (then commit), revert: postings over HTTP, driven by wrk + Lua;
- fixed: 100 requests/s of spread postings, open loop (``bench/httpload.py``): p50/p95/p99;
- batch: atomic batches of transfers; pgbench: the same transfer in SQL, the ceiling;
- scale: a million transfers bulk-loaded through SQL (``bench/load.py``), then spread and
  fixed again, and the first against the 1,000th page of the transaction list.

``check_ledger``'s checks run after every scenario; a violation fails the run. ``--smoke`` runs
every step with tiny numbers (the test suite does, in tests/performance).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import re
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bench.database import DEFAULT_URL, ROOT, bench_env, migrate, recreate_database, setup_django
from bench.httpload import Scenario, Target, closed_loop, fixed_rate, percentile
from bench.report import ROUND, print_table, targets_of

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"


@dataclass
class Config:
    database_url: str = DEFAULT_URL
    port: int = 8150
    accounts: int = 1000
    seconds: float = 15
    fixed_seconds: float = 20
    rate: float = 100
    connections: int = 12
    batch_size: int = 100
    batch_connections: int = 2
    load_transactions: int = 1_000_000
    page_samples: int = 40
    workers: int = 3
    threads: int = 4
    warmup: float = 3
    load_generator: str = "wrk"
    repetitions: int = 3
    smoke: bool = False
    out: str = str(RESULTS / "latest.json")


SMOKE = {
    "repetitions": 2,
    "accounts": 20,
    "seconds": 1.0,
    "fixed_seconds": 1.5,
    "rate": 20,
    "connections": 2,
    "batch_size": 10,
    "batch_connections": 1,
    "load_transactions": 2_000,
    "page_samples": 2,
    "workers": 1,
    "threads": 2,
    "warmup": 0.5,
}


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def free_port(preferred: int) -> int:
    for port in [preferred, *range(8100, 8200)]:
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port in 8100-8199")


@contextlib.contextmanager
def gunicorn(config: Config) -> Iterator[subprocess.Popen[bytes]]:
    env = bench_env(
        config.database_url,
        BENCH_BIND=f"127.0.0.1:{config.port}",
        BENCH_WORKERS=str(config.workers),
        BENCH_THREADS=str(config.threads),
    )
    command = [sys.executable, "-m", "gunicorn", "ledgerproject.wsgi", "-c"]
    process = subprocess.Popen([*command, str(HERE / "gunicorn_conf.py")], cwd=ROOT, env=env)
    try:
        deadline = time.time() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{config.port}/health", timeout=2):
                    break
            except OSError:
                if process.poll() is not None or time.time() > deadline:
                    raise RuntimeError("gunicorn did not start") from None
                time.sleep(0.2)
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()


class Bench:
    def __init__(self, config: Config) -> None:
        self.config = config
        self.results: dict[str, Any] = {}
        self.checks: list[dict[str, Any]] = []

    # -- measuring -----------------------------------------------------------------------

    def wrk(self, name: str, seconds: float, *extra: str, connections: int) -> dict[str, Any]:
        script = (HERE / "wrk" / "common.lua").read_text() + (
            HERE / "wrk" / f"{name}.lua"
        ).read_text()
        with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as handle:
            handle.write(script)
        try:
            command = [
                "wrk",
                "-t1",
                f"-c{connections}",
                f"-d{max(1, round(seconds))}s",
                "--timeout",
                "10s",
                "-s",
                handle.name,
                f"http://127.0.0.1:{self.config.port}",
                "--",
                str(self.target.accounts),
                self.target.token,
                self.target.ledger_path,
                *extra,
            ]
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
        finally:
            os.unlink(handle.name)
        match = re.search(r"^WRKJSON (.*)$", output, re.MULTILINE)
        if match is None:
            raise RuntimeError(f"wrk printed no summary:\n{output}")
        raw = json.loads(match.group(1))
        seconds_run = raw["duration_us"] / 1e6
        errors = raw["errors"]
        return {
            "requests": raw["requests"],
            "seconds": round(seconds_run, 3),
            "rps": round(raw["requests"] / seconds_run, 1),
            "errors": errors["connect"] + errors["read"] + errors["write"] + errors["timeout"],
            "status_errors": errors["status"],
            "p50_ms": raw["latency_us"]["p50"] / 1000,
            "p90_ms": raw["latency_us"]["p90"] / 1000,
            "p99_ms": raw["latency_us"]["p99"] / 1000,
            "max_ms": raw["latency_us"]["max"] / 1000,
            "counts": raw["counts"],
            "generator": f"wrk -t1 -c{connections}",
            # the load generator's own CPU, in cores: far below 1, so it is not the bottleneck
            "generator_cpu": round(
                (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) / seconds_run,
                3,
            ),
        }

    def load(
        self, name: str, seconds: float | None = None, connections: int | None = None
    ) -> dict[str, Any]:
        seconds = seconds or self.config.seconds
        connections = connections or self.config.connections
        extra: list[str] = []
        if name == "floor":
            extra = [self.target.floor_path]
        if name == "batch":
            extra = [str(self.config.batch_size)]
        if self.config.load_generator == "wrk":
            result = self.wrk(name, seconds, *extra, connections=connections)
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
        return result

    def fixed(self, seconds: float | None = None) -> dict[str, Any]:
        scenario = Scenario("spread", self.target)
        cpu = time.process_time()
        run = fixed_rate(
            scenario.next,
            self.target,
            rate=self.config.rate,
            seconds=seconds or self.config.fixed_seconds,
        )
        summary = run.summary()
        summary["unit"] = f"postings at a fixed {self.config.rate:g} requests/s"
        summary["units_per_s"] = summary["rps"]
        summary["generator"] = "python open loop (bench/httpload.py)"
        summary["generator_cpu"] = round((time.process_time() - cpu) / run.seconds, 3)
        return summary

    def pgbench(self) -> dict[str, Any]:
        parts = urlsplit(self.config.database_url)
        command = [
            "pgbench",
            "-n",
            "-c",
            str(self.config.connections),
            "-j",
            "2",
            "-T",
            str(max(1, round(self.config.seconds))),
            "-f",
            str(HERE / "pgbench_transfer.sql"),
            "-D",
            f"ledger={self.ledger.pk}",
            "-D",
            f"accounts={self.config.accounts}",
            "-h",
            parts.hostname or "127.0.0.1",
            "-p",
            str(parts.port or 5432),
            "-U",
            parts.username or "postgres",
            parts.path.lstrip("/"),
        ]
        run = subprocess.run(command, capture_output=True, text=True)
        if run.returncode != 0:
            raise RuntimeError(f"pgbench failed:\n{run.stdout}\n{run.stderr}")
        tps = float(re.search(r"tps = ([\d.]+)", run.stdout).group(1))  # type: ignore[union-attr]
        failed = re.search(r"number of failed transactions: (\d+)", run.stdout)
        latency = re.search(r"latency average = ([\d.]+) ms", run.stdout)
        done = re.search(r"number of transactions actually processed: (\d+)", run.stdout)
        return {
            "requests": int(done.group(1)) if done else 0,
            "rps": round(tps, 1),
            "unit": "transfers/s (SQL, no HTTP)",
            "units_per_s": round(tps, 1),
            "errors": int(failed.group(1)) if failed else 0,
            "status_errors": 0,
            "mean_ms": float(latency.group(1)) if latency else None,
            "generator": f"pgbench -c{self.config.connections} -j2",
        }

    def pages(self) -> dict[str, Any]:
        """Median time of GET page 1 and page 1,000 (limit 100) of the transaction list."""
        from django.db import connection

        from ledgerproject.api.pagination import encode_cursor

        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT created_at, id FROM transactions_transaction WHERE ledger_id = %s "
                "ORDER BY created_at, id OFFSET 99899 LIMIT 1",
                [self.ledger.pk],
            )
            row = cursor.fetchone()
        if row is None:  # a smoke run holds fewer than 100,000 transactions
            cursor_value = None
            page = "last"
        else:
            cursor_value = encode_cursor(row[0], row[1])
            page = 1000
        import http.client

        client = http.client.HTTPConnection("127.0.0.1", self.config.port, timeout=30)
        headers = {"Authorization": f"Bearer {self.target.token}"}

        def timed(query: str) -> tuple[list[float], int]:
            samples = []
            for _ in range(self.config.page_samples + 2):
                started = time.perf_counter()
                client.request(
                    "GET", f"{self.target.ledger_path}/transactions?{query}", headers=headers
                )
                response = client.getresponse()
                body = response.read()
                if response.status != 200:
                    raise RuntimeError(f"page answered {response.status}: {body[:200]!r}")
                samples.append((time.perf_counter() - started) * 1000)
            return samples[2:], len(json.loads(body))

        first, first_rows = timed("limit=100")
        if cursor_value is None:
            later, later_rows = first, first_rows
        else:
            later, later_rows = timed(f"limit=100&cursor={cursor_value}")
        return {
            "page_1_ms": round(percentile(first, 50), 2),
            "page_1_p95_ms": round(percentile(first, 95), 2),
            f"page_{page}_ms": round(percentile(later, 50), 2),
            f"page_{page}_p95_ms": round(percentile(later, 95), 2),
            "rows": [first_rows, later_rows],
            "ratio": round(percentile(later, 50) / percentile(first, 50), 3),
        }

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

    def check(self, after: str) -> None:
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

    def step(self, name: str, result: dict[str, Any]) -> dict[str, Any]:
        log(
            f"  {name}: {result.get('units_per_s')} {result.get('unit', '')}; "
            f"p99 {result.get('p99_ms', '-')} ms; errors {result.get('errors', 0)}"
            f"+{result.get('status_errors', 0)}"
        )
        self.check(name)
        return result

    def measure(self, name: str) -> dict[str, Any]:
        if name.startswith("engine_"):
            from bench.engine_rate import engine_rate

            kind = name.removeprefix("engine_").removesuffix("_no_outbox")
            return engine_rate(
                ledger_id=str(self.ledger.pk),
                accounts=self.config.accounts,
                kind=kind,
                seconds=self.config.seconds,
                outbox=not name.endswith("_no_outbox"),
            )
        if name == "fixed":
            return self.fixed()
        if name == "pgbench":
            return self.pgbench()
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
        with gunicorn(config):
            self.load("spread", seconds=config.warmup)
            rounds = []
            for number in range(1, config.repetitions + 1):
                log(f"bench: round {number} of {config.repetitions}")
                rounds.append(
                    {name: self.step(f"{name} #{number}", self.measure(name)) for name in ROUND}
                )
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
            self.check("load")
            self.load("spread", seconds=config.warmup)
            self.results["scaled_rounds"] = [
                {
                    "spread": self.step(f"spread_scaled #{number}", self.load("spread")),
                    "fixed": self.step(f"fixed_scaled #{number}", self.fixed()),
                }
                for number in range(1, config.repetitions + 1)
            ]
            self.results["pages"] = self.pages()
            self.check("pages")
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


def parse(argv: list[str] | None = None) -> Config:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny numbers, a few seconds")
    for name, value in asdict(Config()).items():
        if name == "smoke":
            continue
        parser.add_argument(f"--{name.replace('_', '-')}", type=type(value), default=None)
    args = parser.parse_args(argv)
    config = Config(**(SMOKE if args.smoke else {}), smoke=args.smoke)
    for name in asdict(config):
        value = getattr(args, name, None)
        if value is not None and name != "smoke":
            setattr(config, name, value)
    if config.load_generator == "wrk" and shutil.which("wrk") is None:
        if not config.smoke:
            sys.exit("make bench needs wrk (apt-get install wrk); `make bench` installs it.")
        config.load_generator = "python"
    if shutil.which("pgbench") is None:
        sys.exit("the bench needs pgbench (apt-get install postgresql-client).")
    config.port = free_port(config.port)
    return config


def main(argv: list[str] | None = None) -> int:
    config = parse(argv)
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
