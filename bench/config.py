"""What one ``make bench`` run measures with: sizes, durations, the service's workers, and the
smoke run's tiny numbers (``--smoke``, which the test suite runs); every field is also a
command-line option of ``python -m bench.run``."""

from __future__ import annotations

import argparse
import shutil
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from bench.database import DEFAULT_URL
from bench.tools import free_port

RESULTS = Path(__file__).resolve().parent / "results"


@dataclass
class Config:
    database_url: str = DEFAULT_URL
    port: int = 8150
    accounts: int = 1000
    seconds: float = 15
    slices: int = 5
    fixed_seconds: float = 20
    rate: float = 100
    connections: int = 12
    batch_size: int = 100
    batch_connections: int = 2
    load_transactions: int = 1_000_000
    page_samples: int = 40
    workers: int = 12
    threads: int = 1
    warmup: float = 20
    rewarm: float = 3
    load_generator: str = "wrk"
    repetitions: int = 3
    smoke: bool = False
    out: str = str(RESULTS / "latest.json")


SMOKE = {
    "repetitions": 2,
    "accounts": 20,
    "seconds": 1.0,
    "slices": 2,
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
    "rewarm": 0.5,
}


def parse(argv: list[str] | None, description: str) -> Config:
    """The run's settings: the defaults, or the smoke run's, then what the command line says."""
    parser = argparse.ArgumentParser(description=description)
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
    slots = config.workers * config.threads
    if max(config.connections, config.batch_connections) > slots:
        # each worker thread holds one connection (bench/gunicorn_worker.py): more would wait
        sys.exit(f"{config.connections} connections need at least as many workers x threads.")
    if config.load_generator == "wrk" and shutil.which("wrk") is None:
        if not config.smoke:
            sys.exit("make bench needs wrk (apt-get install wrk); `make bench` installs it.")
        config.load_generator = "python"
    if shutil.which("pgbench") is None:
        sys.exit("the bench needs pgbench (apt-get install postgresql-client).")
    config.port = free_port(config.port)
    return config
