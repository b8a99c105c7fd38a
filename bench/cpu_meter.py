"""Where the machine's CPU went while a scenario ran: ``with CpuMeter() as meter: ...`` then
``meter.figures(units)``, from Linux's ``/proc``: the share of both cores busy (I/O wait is
idle), and the CPU of gunicorn's processes, PostgreSQL's and the rest per unit of work. A round
that left the machine idle was held back by something else than CPU (a lock, a worker with
more than its share of the connections): its throughput says little about the code."""

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


def cpu_seconds(stat: str) -> float:
    """User plus system CPU of a process, from the text of its ``/proc/<pid>/stat``."""
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def _processes() -> dict[int, tuple[str, float]]:
    """``{pid: (group, CPU seconds so far)}`` of the live processes."""
    found: dict[int, tuple[str, float]] = {}
    for entry in (entry for entry in PROC.iterdir() if entry.name.isdigit()):
        try:
            stat, command = (entry / "stat").read_text(), (entry / "cmdline").read_bytes()
        except OSError:  # gone meanwhile
            continue
        postgres = stat.split(" (", 1)[1].startswith("postgres") or command.startswith(b"postgres")
        group = "service" if b"gunicorn" in command else "postgresql" if postgres else "other"
        found[int(entry.name)] = (group, cpu_seconds(stat))
    return found


class CpuMeter:
    """Samples ``/proc`` at the start and the end of a block (nothing where there is no
    ``/proc``) and counts, per process, the CPU it used in between (all of it for a process
    started inside the block). A process that ended inside the block takes what it used there
    with it: the figures are for long-lived processes (workers, backends, the generator)."""

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
        total, idle = (
            after - before for after, before in zip(self.machine_after, self.machine, strict=True)
        )
        spent = dict.fromkeys(("service", "postgresql", "other"), 0.0)
        for pid, (group, cpu) in self.processes_after.items():
            before = self.processes.get(pid)
            spent[group] += cpu - (before[1] if before and before[0] == group else 0.0)
        per_unit = {g: round(s * 1000 / units, 2) for g, s in spent.items()} if units else {}
        return {"busy": round(1 - idle / total, 3) if total else None, "ms_per_unit": per_unit}
