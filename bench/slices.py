"""Scenarios run in interleaved slices, so that a ratio compares figures measured under the
same machine speed.

A round used to run the floor, then spread, then hot, each for 15 s in one go. This machine's
speed moves by a fifth within a minute (the floor alone served 820 and 1,067 postings/s in two
rounds of one run), and a ratio of two figures measured 15 s apart took the drift for a
change in code. Here each of the interleaved scenarios runs in short slices, in turn (floor,
spread, hot, floor, spread, hot, ...), and its figures are the slices added up: every scenario
is exposed to the same phases of the machine.

Latency percentiles are not averaged: each slice's load generator reports every latency it
recorded (a histogram, one bucket per microsecond), the slices' histograms are added, and the
percentiles are read from the sum, ranked as wrk ranks its own. wrk corrects each run's
histogram for coordinated omission before reporting it (each slice with its own interval),
so the sum is close to what one long run would report, not identical to it."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

Histogram = Sequence[Sequence[int]]  # [microseconds, count] pairs


def histogram_of(latencies_ms: Iterable[float]) -> list[list[int]]:
    """The latencies (milliseconds) as ``[microseconds, count]`` pairs, in order."""
    counts = Counter(round(ms * 1000) for ms in latencies_ms)
    return [[us, n] for us, n in sorted(counts.items())]


def merged(histograms: Iterable[Histogram]) -> list[list[int]]:
    counts: Counter[int] = Counter()
    for histogram in histograms:
        for us, n in histogram:
            counts[int(us)] += int(n)
    return [[us, n] for us, n in sorted(counts.items())]


def percentile_ms(histogram: Histogram, pct: float) -> float:
    """The latency (milliseconds) of the request of rank ``pct`` % of the requests, ranked as
    wrk ranks them for its own percentiles (0 when there is none)."""
    total = sum(n for _, n in histogram)
    if not total:
        return 0.0
    wanted = math.floor(pct / 100 * total + 0.5 + 0.5)  # wrk: round(p / 100 * count + 0.5)
    seen = 0
    for us, n in histogram:
        seen += n
        if seen >= wanted:
            return us / 1000
    return histogram[-1][0] / 1000


def _weighted(values: list[tuple[float, float]]) -> float | None:
    weight = sum(w for _, w in values)
    return sum(v * w for v, w in values) / weight if weight else None


def combine(slices: list[dict[str, Any]]) -> dict[str, Any]:
    """One scenario's slices (each a finished ``Bench.load`` result with its ``histogram``, or
    an in-process rate of the engine, which has no latencies) as one result: requests, errors
    and seconds added, the rate over the seconds added, the latencies read from the added
    histograms, and the CPU per unit weighted by each slice's units (the machine's share busy
    by its seconds)."""
    first = slices[0]
    seconds = sum(s["seconds"] for s in slices)
    timed = all("histogram" in s for s in slices)  # the engine's in-process rates are not
    histogram = merged(s["histogram"] for s in slices) if timed else []
    counts: Counter[str] = Counter()
    for s in slices:
        counts.update(s.get("counts", {}))
    stale = {"histogram", "cpu", "p95_ms", "generator_cpu"}  # recomputed below, or dropped
    out = {
        **{k: v for k, v in first.items() if k not in stale},
        "requests": sum(s["requests"] for s in slices),
        "seconds": round(seconds, 3),
        "errors": sum(s["errors"] for s in slices),
        "status_errors": sum(s["status_errors"] for s in slices),
        "counts": dict(counts),
        "units_per_s": round(sum(s["units_per_s"] * s["seconds"] for s in slices) / seconds, 1),
        "slices": [s["units_per_s"] for s in slices],
    }
    if timed:
        out |= {
            "p50_ms": percentile_ms(histogram, 50),
            "p90_ms": percentile_ms(histogram, 90),
            "p99_ms": percentile_ms(histogram, 99),
            "max_ms": histogram[-1][0] / 1000 if histogram else 0.0,
        }
    if "rps" in first:
        out["rps"] = round(out["requests"] / seconds, 1)
    if timed and "p95_ms" in first:
        out["p95_ms"] = percentile_ms(histogram, 95)
    if "generator_cpu" in first:
        generator = _weighted([(s["generator_cpu"], s["seconds"]) for s in slices])
        out["generator_cpu"] = None if generator is None else round(generator, 3)
    cpus = [s for s in slices if s.get("cpu") and s["cpu"]["ms_per_unit"]]
    if cpus:
        units = [(s, s["units_per_s"] * s["seconds"]) for s in cpus]
        groups = cpus[0]["cpu"]["ms_per_unit"]
        busy = _weighted(
            [(s["cpu"]["busy"], s["seconds"]) for s in cpus if s["cpu"]["busy"] is not None]
        )
        out["cpu"] = {
            "busy": None if busy is None else round(busy, 3),
            "ms_per_unit": {
                g: round(_weighted([(s["cpu"]["ms_per_unit"][g], u) for s, u in units]) or 0, 2)
                for g in groups
            },
        }
    return out
