"""The programs ``make bench`` drives, each behind one function that answers its figures: the
service under gunicorn, wrk with a Lua scenario, pgbench with a SQL script, django-hordak's
process, and the fixed-rate probe in Python."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import queue
import random
import re
import resource
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bench.database import ROOT, bench_env
from bench.slices import histogram_of, percentile_ms

HERE = Path(__file__).resolve().parent


def free_port(preferred: int) -> int:
    for port in [preferred, *range(8100, 8200)]:
        with socket.socket() as sock, contextlib.suppress(OSError):
            sock.bind(("127.0.0.1", port))
            return port
    raise RuntimeError("no free port in 8100-8199")


@contextlib.contextmanager
def gunicorn(database_url: str, *, port: int, workers: int, threads: int) -> Iterator[None]:
    """The service with the bench settings until the block ends, up once ``/health`` answers:
    workers that hold one kept-alive connection per thread (``bench/gunicorn_worker.py``)."""
    command = [
        sys.executable, "-m", "gunicorn", "ledgerproject.wsgi", "--bind", f"127.0.0.1:{port}",
        "--worker-class", "bench.gunicorn_worker.ThreadPerConnectionWorker", "--workers",
        str(workers), "--threads", str(threads), "--worker-connections", str(threads),
        "--keep-alive", "30", "--backlog", "2048", "--preload", "--log-level", "warning",
        "--graceful-timeout", "5",
    ]  # fmt: skip
    process = subprocess.Popen(command, cwd=ROOT, env=bench_env(database_url))
    try:
        for _ in range(150):  # 30 s at most
            with contextlib.suppress(OSError):
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2).close()
                break
            if process.poll() is not None:
                raise RuntimeError("gunicorn did not start")
            time.sleep(0.2)
        else:
            raise RuntimeError("gunicorn did not answer in 30 s")
        yield
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()


def wrk(
    name: str, *, port: int, seconds: float, connections: int, args: list[str], histogram: bool
) -> dict[str, Any]:
    """wrk running ``wrk/common.lua`` + ``wrk/<name>.lua`` (``args`` go to the script) for whole
    seconds: the script's summary, with every latency if ``histogram`` (a slice's, since reading
    it walks wrk's histogram bucket by bucket)."""
    with tempfile.NamedTemporaryFile("w", suffix=".lua") as script:
        script.write("".join((HERE / "wrk" / f).read_text() for f in ("common.lua", f"{name}.lua")))
        script.flush()
        command = ["wrk", "-t1", f"-c{connections}", f"-d{max(1, round(seconds))}s", "--timeout",
                   "10s", "-s", script.name, f"http://127.0.0.1:{port}", "--", *args]  # fmt: skip
        env = {**os.environ, "WRK_HISTOGRAM": "1" if histogram else "0"}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        output = subprocess.run(command, capture_output=True, text=True, check=True, env=env).stdout
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if (match := re.search(r"^WRKJSON (.*)$", output, re.MULTILINE)) is None:
        raise RuntimeError(f"wrk printed no summary:\n{output}")
    raw = json.loads(match.group(1))
    elapsed, errors, latency = raw["duration_us"] / 1e6, raw["errors"], raw["latency_us"]
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return {
        "requests": raw["requests"], "seconds": round(elapsed, 3),
        "rps": round(raw["requests"] / elapsed, 1), "status_errors": errors["status"],
        "errors": errors["connect"] + errors["read"] + errors["write"] + errors["timeout"],
        **{f"{p}_ms": latency[p] / 1000 for p in ("p50", "p90", "p99", "max")},
        "counts": raw["counts"], "histogram": raw["histogram"],
        "generator": f"wrk -t1 -c{connections}",
        # the load generator's own CPU, in cores: far below 1, so it is not the bottleneck
        "generator_cpu": round(cpu / elapsed, 3),
    }  # fmt: skip


def pgbench(database_url: str, *, clients: int, seconds: float, **variables: str) -> dict[str, Any]:
    """``pgbench_transfer.sql`` with ``-D`` ``variables``, straight against the database."""
    url = urlsplit(database_url)
    defines = [arg for name, value in variables.items() for arg in ("-D", f"{name}={value}")]
    command = ["pgbench", "-n", "-c", str(clients), "-j", "2", "-T", str(max(1, round(seconds))),
               "-f", str(HERE / "pgbench_transfer.sql"), *defines, "-h", url.hostname or
               "127.0.0.1", "-p", str(url.port or 5432), "-U", url.username or "postgres",
               url.path.lstrip("/")]  # fmt: skip
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"pgbench failed:\n{run.stdout}\n{run.stderr}")

    def found(pattern: str) -> float:
        return float(match.group(1)) if (match := re.search(pattern, run.stdout)) else 0.0

    tps = round(found(r"tps = ([\d.]+)"), 1)
    return {"requests": int(found(r"actually processed: (\d+)")), "rps": tps, "units_per_s": tps,
            "unit": "transfers/s (SQL, no HTTP)", "errors": int(found(r"failed \w+: (\d+)")),
            "status_errors": 0, "generator": f"pgbench -c{clients} -j2"}  # fmt: skip


@contextlib.contextmanager
def hordak(python: str, database_url: str) -> Iterator[Callable[[float], dict[str, Any]]]:
    """``bench/hordak_compare.py`` run by ``python`` (a virtual environment with django-hordak)
    on the bench's server, set up; the block gets a ``measure(seconds)``."""
    server = urlsplit(database_url)._replace(path="").geturl()
    command = [python, str(HERE / "hordak_compare.py"), server]
    process = subprocess.Popen(command, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    stdin, stdout = process.stdin, process.stdout
    assert stdin is not None and stdout is not None

    def measure(seconds: float) -> dict[str, Any]:
        stdin.write(f"{seconds}\n")
        stdin.flush()
        return dict(json.loads(stdout.readline()))

    try:
        if stdout.readline().strip() != "ready":
            raise RuntimeError(f"bench/hordak_compare.py did not start with {python}")
        yield measure
    finally:
        stdin.close()
        process.wait(timeout=30)


@dataclass
class Target:
    port: int
    token: str
    ledger_path: str
    accounts: int
    floor_path: str = ""


class Client:
    def __init__(self, target: Target) -> None:
        self.target = target
        self.connection = http.client.HTTPConnection("127.0.0.1", target.port, timeout=30)
        self.headers = {"Authorization": f"Bearer {target.token}"}
        self.headers["Content-Type"] = "application/json"

    def send(self, method: str, path: str, body: str = "") -> tuple[int, bytes]:
        try:
            self.connection.request(method, path, body=body, headers=self.headers)
            response = self.connection.getresponse()
            return response.status, response.read()
        except (OSError, http.client.HTTPException):
            self.connection.close()
            self.connection = http.client.HTTPConnection("127.0.0.1", self.target.port, timeout=30)
            return 0, b""


def fixed_rate(target: Target, *, rate: float, seconds: float, workers: int) -> dict[str, Any]:
    """Spread postings at ``rate`` requests/s, open loop (Debian's wrk cannot hold a rate): the
    i-th is due at ``start + i / rate`` and its latency counts from then, not from when one of
    the ``workers`` got to it, so a stalled server cannot hide its queue."""
    latencies: list[float] = []
    failed = [0, 0]  # connection errors, error statuses
    lock, rng, due = threading.Lock(), random.Random(), queue.Queue[float | None]()
    start = time.perf_counter() + 0.05
    for i in range(int(rate * seconds)):
        due.put(start + i / rate)
    for _ in range(workers):
        due.put(None)

    def worker() -> None:
        client = Client(target)
        while (when := due.get()) is not None:
            time.sleep(max(0.0, when - time.perf_counter()))
            with lock:
                a, b = rng.sample(range(1, target.accounts + 1), 2)
            variables = {"amount": 1 + a % 100, "source": f"@b{a}", "destination": f"@b{b}"}
            body = json.dumps({"transactionTypeCode": "TRANSFER", "variables": variables})
            status, _ = client.send("POST", f"{target.ledger_path}/transactions", body)
            with lock:
                latencies.append((time.perf_counter() - when) * 1000)
                failed[status != 0] += status == 0 or status >= 400
        client.connection.close()

    cpu = time.process_time()
    threads = [threading.Thread(target=worker, daemon=True) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed, histogram = time.perf_counter() - start, histogram_of(latencies)
    return {
        "requests": len(latencies), "seconds": round(elapsed, 3),
        "rps": round(len(latencies) / elapsed, 1), "errors": failed[0],
        "status_errors": failed[1], "histogram": histogram,
        **{f"p{p}_ms": percentile_ms(histogram, p) for p in (50, 95, 99)},
        "max_ms": percentile_ms(histogram, 100),
        "generator": "python open loop (bench.tools.fixed_rate)",
        "generator_cpu": round((time.process_time() - cpu) / elapsed, 3),
    }  # fmt: skip
