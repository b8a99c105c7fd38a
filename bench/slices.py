"""Scenarios in interleaved slices, so that a ratio compares figures measured under the same
machine speed (a small virtual machine's moves by a fifth within a minute): the scenarios run
in turns of short slices, and each one's figures are its slices added up. Percentiles are not
averaged: each slice's latencies (a histogram, one bucket per microsecond) are added and the
percentiles read from the sum, ranked as wrk ranks its own. wrk corrects each slice's histogram
for coordinated omission, so the sum is close to one long run's, not identical to it."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

Histogram = Sequence[Sequence[int]]  # [microseconds, count] pairs


def histogram_of(latencies_ms: Iterable[float]) -> list[list[int]]:
    """The latencies (milliseconds) as ``[microseconds, count]`` pairs, in order."""
    return merged([[[round(ms * 1000), 1] for ms in latencies_ms]])


def merged(histograms: Iterable[Histogram]) -> list[list[int]]:
    counts: Counter[int] = Counter()
    for histogram in histograms:
        for us, n in histogram:
            counts[int(us)] += int(n)
    return [[us, n] for us, n in sorted(counts.items())]


def percentile_ms(histogram: Histogram, pct: float) -> float:
    """The latency (ms) of the request of rank ``pct`` % of them, ranked as wrk ranks its own
    (0 when there is none)."""
    wanted = math.floor(pct / 100 * sum(n for _, n in histogram) + 0.5 + 0.5)
    seen = 0
    for us, n in histogram:
        seen += n
        if seen >= wanted:
            return us / 1000
    return histogram[-1][0] / 1000 if histogram else 0.0


def _weighted(values: list[tuple[float, float]]) -> float | None:
    weight = sum(w for _, w in values)
    return sum(v * w for v, w in values) / weight if weight else None


def combine(slices: list[dict[str, Any]]) -> dict[str, Any]:
    """One scenario's slices (``Bench.load`` results with their ``histogram``, or the engine's
    in-process rates, which have no latencies) as one result: requests, errors and seconds
    added, the rate over the seconds added, the latencies read from the added histograms, the
    CPU per unit weighted by each slice's units (the machine's share busy by its seconds)."""
    first, seconds = slices[0], sum(s["seconds"] for s in slices)
    counts: Counter[str] = Counter()
    for s in slices:
        counts.update(s.get("counts", {}))
    out = {
        **{k: v for k, v in first.items() if k not in {"histogram", "cpu", "generator_cpu"}},
        **{key: sum(s[key] for s in slices) for key in ("requests", "errors", "status_errors")},
        "seconds": round(seconds, 3),
        "counts": dict(counts),
        "units_per_s": round(sum(s["units_per_s"] * s["seconds"] for s in slices) / seconds, 1),
        "slices": [s["units_per_s"] for s in slices],
    }
    if all("histogram" in s for s in slices):  # the engine's in-process rates have none
        histogram = merged(s["histogram"] for s in slices)
        wanted = (50, 90, 95, 99) if "p95_ms" in first else (50, 90, 99)
        out |= {f"p{p}_ms": percentile_ms(histogram, p) for p in wanted}
        out["max_ms"] = histogram[-1][0] / 1000 if histogram else 0.0
    if "rps" in first:
        out["rps"] = round(out["requests"] / seconds, 1)
    if "generator_cpu" in first:
        generator = _weighted([(s["generator_cpu"], s["seconds"]) for s in slices])
        out["generator_cpu"] = None if generator is None else round(generator, 3)
    if cpus := [s for s in slices if s.get("cpu") and s["cpu"]["ms_per_unit"]]:
        units = [(s["cpu"]["ms_per_unit"], s["units_per_s"] * s["seconds"]) for s in cpus]
        timed = [(s["cpu"]["busy"], s["seconds"]) for s in cpus]
        busy = _weighted([(b, t) for b, t in timed if b is not None])
        per_unit = {g: _weighted([(m[g], u) for m, u in units]) or 0 for g in units[0][0]}
        out["cpu"] = {"busy": None if busy is None else round(busy, 3),
                      "ms_per_unit": {g: round(v, 2) for g, v in per_unit.items()}}  # fmt: skip
    return out
