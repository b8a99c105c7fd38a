"""``bench.cpu_meter``: the CPU each group of processes used inside a block, counted per
process, so that a process ending inside the block (a connection closed, a check's backend)
cannot make a group's figure fall, as a sum of the live processes' totals did (PostgreSQL at
0.0 ms a posting after the million-row load, whose backend had ended)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench.cpu_meter import CpuMeter

pytestmark = pytest.mark.skipif(not Path("/proc/stat").exists(), reason="reads Linux's /proc")


def _spin(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_it_counts_the_cpu_used_inside_the_block():
    with CpuMeter() as meter:
        _spin(0.3)
    figures = meter.figures(units=1)
    assert figures["ms_per_unit"]["other"] >= 250  # this process: neither gunicorn nor postgres
    assert 0 < figures["busy"] <= 1


def test_a_process_that_ends_inside_the_block_takes_only_its_own_cpu_with_it():
    spinner = "import time\nend = time.process_time() + 0.5\nwhile time.process_time() < end: pass"
    child = subprocess.Popen([sys.executable, "-c", spinner + "\nimport sys; sys.stdin.read()"],
                             stdin=subprocess.PIPE)  # fmt: skip
    time.sleep(1.0)  # it spent its CPU before the block
    with CpuMeter() as meter:
        child.communicate(b"")  # it ends inside the block
        _spin(0.1)
    assert all(value >= 0 for value in meter.figures(units=1)["ms_per_unit"].values())
    assert meter.figures(units=1)["ms_per_unit"]["other"] >= 90
