"""The programs ``make bench`` drives, each behind one function: the service under gunicorn, wrk
with a Lua scenario, pgbench with a SQL script. Each answers its figures as a dict; the runner
(``bench.run``) decides what to measure and in which order."""

from __future__ import annotations

import contextlib
import json
import os
import re
import resource
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bench.database import ROOT, bench_env

HERE = Path(__file__).resolve().parent


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
def gunicorn(
    database_url: str, *, port: int, workers: int, threads: int
) -> Iterator[subprocess.Popen[bytes]]:
    """The service with the bench settings, until the block ends; up once ``/health`` answers."""
    env = bench_env(
        database_url,
        BENCH_BIND=f"127.0.0.1:{port}",
        BENCH_WORKERS=str(workers),
        BENCH_THREADS=str(threads),
    )
    command = [sys.executable, "-m", "gunicorn", "ledgerproject.wsgi", "-c"]
    process = subprocess.Popen([*command, str(HERE / "gunicorn_conf.py")], cwd=ROOT, env=env)
    try:
        deadline = time.time() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
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


def wrk(
    scripts: Path,
    name: str,
    *,
    port: int,
    seconds: float,
    connections: int,
    args: list[str],
    histogram: bool = False,
) -> dict[str, Any]:
    """wrk with ``common.lua`` + ``<name>.lua`` from ``scripts`` against the service on
    ``port``; ``args`` go to the script. The figures are the script's own summary line;
    ``histogram``: with every latency recorded (``bench.slices``), else an empty one. wrk
    runs whole seconds (at least one)."""
    script = (scripts / "common.lua").read_text() + (scripts / f"{name}.lua").read_text()
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
            f"http://127.0.0.1:{port}",
            "--",
            *args,
        ]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        env = {**os.environ, "WRK_HISTOGRAM": "1" if histogram else "0"}
        output = subprocess.run(command, capture_output=True, text=True, check=True, env=env).stdout
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
        "histogram": raw["histogram"],
        "generator": f"wrk -t1 -c{connections}",
        # the load generator's own CPU, in cores: far below 1, so it is not the bottleneck
        "generator_cpu": round(
            (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) / seconds_run,
            3,
        ),
    }


def pgbench(
    database_url: str,
    script: Path,
    *,
    clients: int,
    seconds: float,
    variables: dict[str, str],
) -> dict[str, Any]:
    """pgbench running ``script`` with ``-D`` ``variables``, straight against the database."""
    parts = urlsplit(database_url)
    defines = [arg for name, value in variables.items() for arg in ("-D", f"{name}={value}")]
    command = [
        "pgbench",
        "-n",
        "-c",
        str(clients),
        "-j",
        "2",
        "-T",
        str(max(1, round(seconds))),
        "-f",
        str(script),
        *defines,
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
        "generator": f"pgbench -c{clients} -j2",
    }
