"""Where the machine's CPU went while a scenario ran: ``with CpuMeter() as meter: ...`` then
``meter.figures(units)``. From ``/proc`` (Linux): the share of both cores busy (``/proc/stat``;
waiting for I/O counts as idle), and the CPU of the service's processes (gunicorn), of
PostgreSQL's and of everything else, in milliseconds per unit of work. A round whose machine
was not busy was held back by something other than CPU (a lock, a worker that took more than
its share of the connections), and its throughput says little about the code."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

PROC = Path("/proc")
TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _machine() -> tuple[int, int]:
    """(all jiffies, idle + iowait jiffies) since boot."""
    fields = [int(x) for x in (PROC / "stat").read_text().split("\n", 1)[0].split()[1:]]
    return sum(fields), fields[3] + fields[4]


def _group(command: bytes, name: str) -> str:
    if b"gunicorn" in command:
        return "service"
    if name.startswith("postgres") or command.startswith(b"postgres"):
        return "postgresql"
    return "other"


GROUPS = ("service", "postgresql", "other")


def cpu_seconds(stat: str) -> float:
    """User plus system CPU of a process, from the text of its ``/proc/<pid>/stat``."""
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def _processes() -> dict[int, tuple[str, float]]:
    """``{pid: (group, CPU seconds so far)}`` of the live processes."""
    found: dict[int, tuple[str, float]] = {}
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes()
        except OSError:  # gone meanwhile
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        found[int(entry.name)] = (_group(command, name), cpu_seconds(stat))
    return found


class CpuMeter:
    """Samples ``/proc`` at the start and the end of a block (nothing where there is no
    ``/proc``) and counts, per process, the CPU it used in between (all of it for a process
    started inside the block). A process that ended inside the block takes what it used there
    with it: the figures are for long-lived processes (the service's workers, PostgreSQL's
    backends, the load generator)."""

    def __enter__(self) -> CpuMeter:
        self.available = (PROC / "stat").exists()
        if self.available:
            self.machine, self.processes = _machine(), _processes()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.available:
            self.machine_after, self.processes_after = _machine(), _processes()

    def figures(self, units: float) -> dict[str, Any]:
        """``busy`` (0 to 1) and ``ms_per_unit`` by group, for ``units`` of work done."""
        if not self.available:
            return {}
        total = self.machine_after[0] - self.machine[0]
        idle = self.machine_after[1] - self.machine[1]
        spent = dict.fromkeys(GROUPS, 0.0)
        for pid, (group, cpu) in self.processes_after.items():
            before = self.processes.get(pid)
            spent[group] += cpu - (before[1] if before and before[0] == group else 0.0)
        per_unit = {g: round(s * 1000 / units, 2) for g, s in spent.items()} if units else {}
        return {
            "busy": round(1 - idle / total, 3) if total else None,
            "ms_per_unit": per_unit,
        }
