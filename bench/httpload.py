"""HTTP load in Python (standard library only): the fixed-rate latency probe, and a closed-loop
stand-in for wrk when wrk is not installed (the smoke test; never used for the targets).

Debian's wrk cannot hold a fixed request rate (that is wrk2), so the 100 requests/s scenario
is open-loop here: request i is due at ``start + i / rate``; a pool of worker threads with
persistent connections sends each one when it is due, and its latency is measured from the due
time, not from when a worker got to it, so a stalled server cannot hide its queue
("coordinated omission"). At 100 requests/s this client uses a few percent of one core.
"""

from __future__ import annotations

import http.client
import json
import queue
import random
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bench.slices import histogram_of

Request = tuple[str, str, str]  # method, path, body


@dataclass
class Target:
    host: str
    port: int
    token: str
    ledger_path: str
    accounts: int
    floor_path: str = ""


def percentile(values: list[float], pct: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = min(len(ordered) - 1, max(0, round(pct / 100 * len(ordered) + 0.5) - 1))
    return ordered[rank]


class Scenario:
    """Makes requests and learns from responses (the pending and revert scenarios chain)."""

    def __init__(self, name: str, target: Target, *, batch_size: int = 100) -> None:
        self.name = name
        self.target = target
        self.batch_size = batch_size
        self.rng = random.Random()
        self.queue: list[str] = []
        self.counts: dict[str, int] = {}
        self.lock = threading.Lock()

    def _pair(self) -> tuple[str, str]:
        a, b = self.rng.sample(range(1, self.target.accounts + 1), 2)
        return f"@b{a}", f"@b{b}"

    def _transfer(self, code: str, source: str, destination: str) -> dict[str, Any]:
        return {
            "transactionTypeCode": code,
            "variables": {
                "amount": self.rng.randint(1, 100),
                "source": source,
                "destination": destination,
            },
        }

    def next(self) -> Request:
        path = self.target.ledger_path
        source, destination = self._pair()
        if self.name == "floor":
            body = {"source": source, "destination": destination, "amount": 1}
            return "POST", self.target.floor_path, json.dumps(body)
        if self.name == "hot":
            return (
                "POST",
                f"{path}/transactions",
                json.dumps(self._transfer("TRANSFER", "@hot", destination)),
            )
        if self.name == "batch":
            items = [self._transfer("TRANSFER", *self._pair()) for _ in range(self.batch_size)]
            body = json.dumps({"atomic": True, "transactions": items})
            return "POST", f"{path}/transactions/batch", body
        if self.name in {"pending", "revert"}:
            with self.lock:
                pending = self.queue.pop() if self.queue else None
            if pending:
                action = "commit" if self.name == "pending" else "revert"
                return "POST", f"{path}/transactions/{pending}/{action}", ""
            code = "TRANSFER_HELD" if self.name == "pending" else "TRANSFER"
            return (
                "POST",
                f"{path}/transactions",
                json.dumps(self._transfer(code, source, destination)),
            )
        return (
            "POST",
            f"{path}/transactions",
            json.dumps(self._transfer("TRANSFER", source, destination)),
        )

    def learn(self, status: int, body: bytes) -> None:
        if self.name not in {"pending", "revert"}:
            return
        text = body.decode(errors="replace")
        match = re.match(r'^\{"id":"([^"]+)"', text)
        with self.lock:
            if self.name == "pending":
                if status == 201 and match:
                    self.queue.append(match.group(1))
                    self._count("pending")
                elif status == 200:
                    self._count("commits")
            elif status == 201 and match:
                if '"parentTransactionId":null' in text:
                    self.queue.append(match.group(1))
                    self._count("postings")
                else:
                    self._count("reverts")

    def _count(self, name: str) -> None:
        self.counts[name] = self.counts.get(name, 0) + 1


class Client:
    def __init__(self, target: Target) -> None:
        self.target = target
        self.connection = http.client.HTTPConnection(target.host, target.port, timeout=30)
        self.headers = {
            "Authorization": f"Bearer {target.token}",
            "Content-Type": "application/json",
        }

    def send(self, request: Request) -> tuple[int, bytes]:
        method, path, body = request
        try:
            self.connection.request(method, path, body=body, headers=self.headers)
            response = self.connection.getresponse()
            return response.status, response.read()
        except (OSError, http.client.HTTPException):
            self.connection.close()
            self.connection = http.client.HTTPConnection(
                self.target.host, self.target.port, timeout=30
            )
            return 0, b""


@dataclass
class LoadResult:
    requests: int = 0
    seconds: float = 0.0
    errors: int = 0
    status_errors: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "seconds": round(self.seconds, 3),
            "rps": round(self.requests / self.seconds, 1) if self.seconds else 0.0,
            "errors": self.errors,
            "status_errors": self.status_errors,
            "p50_ms": round(percentile(self.latencies_ms, 50), 2),
            "p95_ms": round(percentile(self.latencies_ms, 95), 2),
            "p99_ms": round(percentile(self.latencies_ms, 99), 2),
            "max_ms": round(max(self.latencies_ms, default=0.0), 2),
            "counts": dict(self.counts),
            "histogram": histogram_of(self.latencies_ms),
        }


def _record(result: LoadResult, lock: threading.Lock, status: int, latency_ms: float) -> None:
    with lock:
        result.requests += 1
        result.latencies_ms.append(latency_ms)
        if status == 0:
            result.errors += 1
        elif status >= 400:
            result.status_errors += 1


def closed_loop(
    scenario: Scenario, target: Target, *, connections: int, seconds: float
) -> LoadResult:
    """Each of ``connections`` threads sends its next request as soon as the last one answers."""
    result, lock = LoadResult(), threading.Lock()
    deadline = time.perf_counter() + seconds

    def worker() -> None:
        client = Client(target)
        while time.perf_counter() < deadline:
            request = scenario.next()
            started = time.perf_counter()
            status, body = client.send(request)
            _record(result, lock, status, (time.perf_counter() - started) * 1000)
            scenario.learn(status, body)
        client.connection.close()  # a gunicorn worker holds one (bench/gunicorn_worker.py)

    started = time.perf_counter()
    threads = [threading.Thread(target=worker, daemon=True) for _ in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    result.seconds = time.perf_counter() - started
    result.counts = dict(scenario.counts)
    return result


def fixed_rate(
    make_request: Callable[[], Request],
    target: Target,
    *,
    rate: float,
    seconds: float,
    workers: int = 16,
) -> LoadResult:
    """Open loop at ``rate`` requests/s; latency counted from each request's due time."""
    result, lock = LoadResult(), threading.Lock()
    due: queue.Queue[float | None] = queue.Queue()
    total = int(rate * seconds)

    def worker() -> None:
        client = Client(target)
        while True:
            when = due.get()
            if when is None:
                client.connection.close()
                return
            delay = when - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            status, _ = client.send(make_request())
            _record(result, lock, status, (time.perf_counter() - when) * 1000)

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(workers)]
    for thread in threads:
        thread.start()
    start = time.perf_counter() + 0.05
    for i in range(total):
        due.put(start + i / rate)
    for _ in threads:
        due.put(None)
    for thread in threads:
        thread.join()
    result.seconds = time.perf_counter() - start
    return result
