"""The bench's arithmetic and its table: medians and spreads of the rounds, the targets,
and the printed report (``bench.run`` measures; this module only reads what it measured)."""

from __future__ import annotations

import statistics
from typing import Any

ROUND = (
    "floor", "spread", "hot", "pending", "revert", "fixed", "batch", "pgbench",
    "engine_spread", "engine_hot", "engine_spread_no_outbox",
)  # fmt: skip
"""One round of scenarios; every round starts with the floor, so each ratio compares figures
measured minutes apart at most."""
INTERLEAVED = ("floor", "spread", "hot")
"""The round's first scenarios, run in turn slice by slice (``bench.slices``): the two ratios
between them compare figures measured under the same machine speed."""
OUTBOX_PAIR = ("engine_spread", "engine_spread_no_outbox")
"""The engine's in-process rate with and without the postings' events, run in turn slice by
slice too: the outbox's cost is their ratio."""
DISAGREE = 0.15


def ratio(a: float, b: float) -> float:
    return round(a / b, 3) if b else 0.0


def spread_of(values: list[float]) -> float:
    """How far the repetitions disagree: (largest - smallest) / median."""
    middle = statistics.median(values)
    return round((max(values) - min(values)) / middle, 3) if middle else 0.0


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The median run's figures (throughput, p50, p99), the spread, and every run."""
    throughput = [run["units_per_s"] for run in runs]
    first = runs[0]
    return {
        "unit": first["unit"],
        "units_per_s": round(statistics.median(throughput), 1),
        "p50_ms": statistics.median(run["p50_ms"] for run in runs) if first.get("p50_ms") else None,
        "p99_ms": statistics.median(run["p99_ms"] for run in runs) if first.get("p99_ms") else None,
        "errors": sum(run.get("errors", 0) for run in runs),
        "status_errors": sum(run.get("status_errors", 0) for run in runs),
        "spread": spread_of(throughput),
        "runs": throughput,
        **_cpu_of(runs),
    }


def _cpu_of(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The machine's share busy in each run, and the median CPU per unit by process group
    (``bench.cpu_meter``), for the runs that measured it."""
    measured = [run["cpu"] for run in runs if run.get("cpu")]
    if not measured:
        return {}
    groups = measured[0]["ms_per_unit"]
    return {
        "busy": [m["busy"] for m in measured],
        "cpu_ms_per_unit": {
            g: round(statistics.median(m["ms_per_unit"][g] for m in measured), 2) for g in groups
        },
    }


def target(name: str, values: list[float], op: str, goal: float) -> dict[str, Any]:
    value = round(statistics.median(values), 3)
    spread = spread_of(values) if len(values) > 1 else 0.0
    return {
        "name": name,
        "value": value,
        "op": op,
        "target": goal,
        "met": value >= goal if op == ">=" else value <= goal,
        "values": values,
        "spread": spread,
        "warning": spread > DISAGREE,
    }


def targets_of(r: dict[str, Any]) -> list[dict[str, Any]]:
    """Summarize every scenario of the rounds into ``r`` (median, spread) and answer the
    targets, each ratio computed within each round (``r``: the bench's results)."""
    rounds, scaled = r["rounds"], r["scaled_rounds"]
    for name in ROUND:
        r[name] = summarize([one[name] for one in rounds])
    r["spread_scaled"] = summarize([one["spread"] for one in scaled])
    r["fixed_scaled"] = summarize([one["fixed"] for one in scaled])

    def per_round(a: str, b: str, key: str = "units_per_s", source: Any = None) -> list[float]:
        top = source or rounds
        return [ratio(x[a][key], y[b][key]) for x, y in zip(top, rounds, strict=True)]

    targets = [
        ("single posting / floor (throughput)", per_round("spread", "floor"), ">=", 0.8),
        ("hot account / spread (throughput)", per_round("hot", "spread"), ">=", 0.8),
        ("p99 at 100 requests/s (ms)", [one["fixed"]["p99_ms"] for one in rounds], "<=", 25.0),
        (
            "1M stored: throughput / empty",
            per_round("spread", "spread", source=scaled),
            ">=",
            0.85,
        ),
        (
            "1M stored: p99 / empty (fixed rate)",
            per_round("fixed", "fixed", "p99_ms", source=scaled),
            "<=",
            1.2,
        ),
        (
            "1M stored: p99 / empty (saturated spread)",
            per_round("spread", "spread", "p99_ms", source=scaled),
            "<=",
            1.2,
        ),
        ("page 1,000 / page 1 (median time)", [r["pages"]["ratio"]], "<=", 1.2),
        ("batch / pgbench (transfers/s)", per_round("batch", "pgbench"), ">=", 0.5),
        (
            "outbox: engine spread with / without events",
            per_round("engine_spread", "engine_spread_no_outbox"),
            ">=",
            0.8,
        ),
    ]
    return [target(n, values, op, t) for n, values, op, t in targets]


def print_table(report: dict[str, Any]) -> None:
    s = report["scenarios"]
    floor = s["floor"]["units_per_s"] or 1
    lines = [
        f"{'scenario':<16} {'median':>10}  {'unit':<40} {'p50 ms':>7} {'p99 ms':>7} "
        f"{'errors':>6} {'x floor':>7} {'spread':>7}",
        "-" * 100,
    ]
    for name in (
        *ROUND,
        "spread_scaled",
        "fixed_scaled",
    ):
        row = s[name]
        errors = row.get("errors", 0) + row.get("status_errors", 0)
        p50 = row.get("p50_ms")
        p99 = row.get("p99_ms")
        lines.append(
            f"{name:<16} {row['units_per_s']:>10.1f}  {row['unit'][:40]:<40} "
            f"{'-' if p50 is None else f'{p50:.1f}':>7} {'-' if p99 is None else f'{p99:.1f}':>7} "
            f"{errors:>6} {row['units_per_s'] / floor:>7.2f} {row['spread']:>7.0%}"
        )
    lines.append("")
    lines.append(
        "CPU ms per unit (median of the rounds) and the machine's share busy in each round:"
    )
    for name in ROUND:
        row = s[name]
        if row.get("cpu_ms_per_unit"):
            parts = ", ".join(f"{g} {v:.2f}" for g, v in row["cpu_ms_per_unit"].items())
            busy = ", ".join(f"{b:.0%}" for b in row["busy"])
            lines.append(f"  {name:<16} {parts}; busy {busy}")
    pages = s["pages"]
    lines.append("")
    lines.append(
        "transaction list, limit 100, median ms: "
        + ", ".join(f"{k} {v}" for k, v in pages.items() if k.endswith("_ms") and "p95" not in k)
        + f" (ratio {pages['ratio']})"
    )
    lines.append(
        f"bulk load: {s['load']['transactions']:,} transactions in {s['load']['seconds']}s"
    )
    lines.append("")
    lines.append(f"{'target (median of the rounds)':<44} {'value':>9}  {'goal':<8} met  spread")
    for t in report["targets"]:
        met = "yes" if t["met"] else "NO "
        warn = "  WARNING: the repetitions disagree by more than 15 %" if t["warning"] else ""
        lines.append(
            f"{t['name']:<44} {t['value']:>9}  {t['op']} {t['target']:<5} {met} "
            f"{t['spread']:>6.0%}{warn}"
        )
    lines.append("")
    lines.append(
        f"errors: {report['errors']}; check_ledger passed after every scenario "
        f"({len(report['checks'])} checks); {report['transactions_stored']:,} transactions stored; "
        f"run took {report['seconds']:.0f}s on {report['machine']['cpus']} CPUs"
    )
    print("\n".join(lines))
