"""``bench.slices``: a scenario run in slices adds up to what one run of it would have
measured: its rate over all the seconds, its percentiles from all the latencies, its CPU per
unit weighted by the units each slice made."""

from __future__ import annotations

import math
import random

from bench.slices import combine, histogram_of, merged, percentile_ms


def _wrk_percentile(values: list[float], pct: float) -> float:
    """wrk's rank (stats.c): C's round(p / 100 * count + 0.5), half away from zero."""
    ordered = sorted(values)
    rank = math.floor(pct / 100 * len(ordered) + 0.5 + 0.5)
    return ordered[min(len(ordered), max(1, rank)) - 1]


def test_a_histogram_gives_the_percentiles_of_the_latencies_it_holds():
    rng = random.Random(7)
    for count in (5_001, 4_000, 10):  # 4,000 and 10: ranks that fall on a half
        latencies = [round(rng.uniform(0.1, 80.0), 3) for _ in range(count)]
        histogram = histogram_of(latencies)
        assert sum(n for _, n in histogram) == len(latencies)
        for pct in (50, 90, 95, 99, 99.9):
            assert percentile_ms(histogram, pct) == _wrk_percentile(latencies, pct), pct
    assert percentile_ms([], 99) == 0.0


def test_slices_histograms_add_up_to_the_histogram_of_all_their_latencies():
    rng = random.Random(11)
    slices = [
        [round(rng.expovariate(0.2), 3) for _ in range(rng.randint(1, 900))] for _ in range(5)
    ]
    together = histogram_of(x for one in slices for x in one)
    assert merged(histogram_of(one) for one in slices) == together
    # the stall of one slice shows in the p99 of the whole, as in one long run
    slices[2] += [900.0] * 60
    whole = [x for one in slices for x in one]
    merged_p99 = percentile_ms(merged(histogram_of(one) for one in slices), 99)
    assert merged_p99 == _wrk_percentile(whole, 99) == 900.0


def _slice(rate: float, seconds: float, latencies: list[float], cpu: dict | None) -> dict:
    requests = round(rate * seconds)
    return {
        "requests": requests,
        "seconds": seconds,
        "rps": rate,
        "errors": 1,
        "status_errors": 2,
        "counts": {"commits": 3},
        "unit": "postings/s",
        "units_per_s": rate,
        "histogram": histogram_of(latencies),
        "cpu": cpu,
    }


def test_combined_slices_add_requests_and_seconds_and_weigh_cpu_by_units():
    a = _slice(100.0, 3.0, [1.0, 2.0, 3.0], {"busy": 0.5, "ms_per_unit": {"service": 2.0}})
    b = _slice(300.0, 1.0, [4.0], {"busy": 1.0, "ms_per_unit": {"service": 1.0}})
    out = combine([a, b])
    assert out["requests"] == 600 and out["seconds"] == 4.0
    assert out["units_per_s"] == 150.0  # 600 units over 4 s, not the mean of 100 and 300
    assert out["rps"] == 150.0
    assert (out["errors"], out["status_errors"], out["counts"]) == (2, 4, {"commits": 6})
    assert out["slices"] == [100.0, 300.0]
    # wrk's rank: C's round(0.5 * 4 + 0.5), half away from zero, so the third of 1, 2, 3, 4
    assert out["p50_ms"] == 3.0 and out["max_ms"] == 4.0
    assert "histogram" not in out
    # 300 units at 2.0 ms and 300 at 1.0 ms; busy over 3 s at 0.5 and 1 s at 1.0
    assert out["cpu"] == {"busy": 0.625, "ms_per_unit": {"service": 1.5}}


def test_figures_of_the_first_slice_alone_are_recomputed_over_all_of_them():
    a = _slice(100.0, 3.0, [1.0] * 99 + [50.0], None)
    b = _slice(100.0, 1.0, [2.0] * 100, None)
    a["p95_ms"], a["generator_cpu"] = 1.0, 0.01
    b["p95_ms"], b["generator_cpu"] = 2.0, 0.05
    out = combine([a, b])
    everything = [1.0] * 99 + [50.0] + [2.0] * 100
    assert out["p95_ms"] == _wrk_percentile(everything, 95) == 2.0
    assert out["generator_cpu"] == 0.02  # weighted by seconds: (0.01 * 3 + 0.05 * 1) / 4


def test_a_machine_found_idle_still_counts_in_the_share_busy():
    a = _slice(100.0, 1.0, [1.0], {"busy": 0.0, "ms_per_unit": {"service": 2.0}})
    b = _slice(100.0, 1.0, [1.0], {"busy": 1.0, "ms_per_unit": {"service": 2.0}})
    assert combine([a, b])["cpu"]["busy"] == 0.5


def test_a_slice_that_measured_no_cpu_does_not_count_in_the_cpu_figures():
    a = _slice(100.0, 2.0, [1.0], {"busy": 0.8, "ms_per_unit": {"service": 2.0}})
    b = _slice(100.0, 2.0, [1.0], {})
    assert combine([a, b])["cpu"] == {"busy": 0.8, "ms_per_unit": {"service": 2.0}}
    assert "cpu" not in combine([b, b])


def test_rates_without_latencies_add_up_with_none_made_up():
    """The engine's in-process rates (``bench.engine_rate``) have no latencies to add: their
    slices add requests and seconds, and no percentile is invented."""
    runs = [
        {"unit": "postings/s in-process", "units_per_s": rate, "requests": round(rate * 3),
         "errors": 0, "status_errors": 0, "seconds": 3.0, "p50_ms": None, "p99_ms": None}
        for rate in (1000.0, 1200.0, 800.0)
    ]  # fmt: skip
    out = combine(runs)
    assert out["units_per_s"] == 1000.0 and out["requests"] == 9000 and out["seconds"] == 9.0
    assert out["slices"] == [1000.0, 1200.0, 800.0]
    assert out["p50_ms"] is None and out["p99_ms"] is None
    assert "p90_ms" not in out and "max_ms" not in out and "cpu" not in out
