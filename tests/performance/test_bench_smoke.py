"""``make bench`` with tiny numbers: every step runs (gunicorn on its own database, the floor,
every scenario, pgbench, the bulk loader, the page timings, check_ledger after each), the
table prints and the JSON is written. The figures themselves mean nothing at this size."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="the bench runs on PostgreSQL (its own database, pgbench, row locks)",
    ),
]


@pytest.fixture
def wrk() -> None:
    """The bench drives wrk: a machine without it fails here, it does not skip."""
    if shutil.which("wrk") is None:
        pytest.fail("wrk is not installed: apt-get install wrk (.ci/run does)")


SCENARIOS = {"floor", "spread", "hot", "pending", "revert", "fixed", "batch", "pgbench"}


def _run_on_own_database(name: str, args: list[str], timeout: int) -> Any:
    """``python -m <args> --database-url <a database of its own>`` on the tests' server; the
    database dropped afterwards, whatever happened."""
    settings = connection.settings_dict
    server = f"{settings['USER']}@{settings['HOST'] or '127.0.0.1'}:{settings['PORT'] or 5432}"
    name = f"{name}_{os.getpid()}"
    try:
        return subprocess.run(
            [sys.executable, "-m", *args, "--database-url", f"postgres://{server}/{name}"],
            cwd=ROOT, capture_output=True, text=True, timeout=timeout,
        )  # fmt: skip
    finally:
        with psycopg.connect(f"postgres://{server}/postgres", autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_the_bench_runs_end_to_end_with_tiny_numbers(tmp_path, wrk):
    out = tmp_path / "smoke.json"
    run = _run_on_own_database(
        "ledger_bench_smoke",
        ["bench.run", "--smoke", "--port", "8140", "--out", str(out)],
        # Alone it runs in about a minute; beside .ci/run's other stream on two cores, it
        # took 120 s once the monitors' twin ledgers were seeded and measured too.
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "batch / pgbench" in run.stdout and "x floor" in run.stdout
    report = json.loads(out.read_text())
    expected = SCENARIOS | {"spread_scaled", "fixed_scaled", "pages", "load"}
    assert expected <= set(report["scenarios"])
    # the floor, spread and hot in interleaved slices (bench/slices.py), before and after the
    # load alike, so that the loaded ledger's figures compare with the empty one's
    for one in report["scenarios"]["rounds"] + report["scenarios"]["scaled_rounds"]:
        assert {"floor", "spread", "hot"} <= set(one)
        for name in ("floor", "spread", "hot"):
            assert len(one[name]["slices"]) == 2 and "histogram" not in one[name], name
    assert report["errors"] == 0
    assert report["checks"] and all(check["ok"] for check in report["checks"])
    # the 9th: the outbox's cost (issue 16); the 10th: what checking balance monitors costs,
    # twin ledgers but for a monitor on every account (issue 44); django-hordak's needs
    # --hordak-python; the last: a ledger funded on tables never analyzed, then analyzed
    assert len(report["targets"]) == 11
    assert report["targets"][-2]["name"] == "balance monitors: watched / unwatched"
    assert report["targets"][-1]["name"] == "never analyzed / analyzed (engine spread)"
    cliff = report["scenarios"]["cliff"]
    assert cliff["no_statistics"]["units_per_s"] > 0 and cliff["analyzed"]["units_per_s"] > 0
    for name in SCENARIOS:
        assert report["scenarios"][name]["units_per_s"] > 0, name
        assert len(report["scenarios"][name]["runs"]) == 2, name  # --smoke: two rounds
    for target in report["targets"]:
        assert {"value", "values", "spread", "warning"} <= set(target), target
    assert "spread" in run.stdout and "median" in run.stdout
    pairs = ("engine_spread", "engine_spread_no_outbox", "engine_unwatched", "engine_watched")
    for name in pairs:
        assert report["scenarios"][name]["units_per_s"] > 0, name
    # the outbox's pair, with and without events, and the monitors', in interleaved slices too
    for one in report["scenarios"]["rounds"]:
        for name in pairs:
            assert len(one[name]["slices"]) == 2, name
        assert "slices" not in one["pgbench"]
    # Where the CPU went in each HTTP scenario: the machine's share busy and the CPU per unit
    # of the service's processes and PostgreSQL's (bench.cpu_meter).
    for name in ("floor", "spread", "hot", "pending", "revert", "batch"):
        row = report["scenarios"][name]
        assert len(row["busy"]) == 2 and all(0 < busy <= 1 for busy in row["busy"]), name
        assert row["cpu_ms_per_unit"]["service"] > 0, name
        assert row["cpu_ms_per_unit"]["postgresql"] > 0, name
    assert "CPU ms per unit" in run.stdout


def test_the_reports_timings_run():
    """``python -m bench.reports`` with tiny numbers: the ledger loaded, made one tree, and
    every report timed (the rolled-up balance of the root checked against the funding)."""
    run = _run_on_own_database(
        "ledger_reports_smoke",
        ["bench.reports", "--accounts", "30", "--transactions", "2000", "--repetitions", "1"],
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "trial balance, now" in run.stdout
    assert "rolled-up balance of a tree of 30 accounts, effective half-way" in run.stdout
