"""The engine's own rate, no HTTP: ``threads`` threads, a connection each, post 2-leg transfers
between random accounts of random ``ledgers`` for ``seconds``. ``outbox=False``: without the
postings' events (not rendered, not written), so that the outbox's cost is a ratio measured in
one process. Only the standard library at the top: ``bench/hordak_compare.py`` imports it."""

from __future__ import annotations

import contextlib
import random
import threading
import time
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any


def run_threads(
    threads: int, seconds: float, prepare: Callable[[int], Callable[[], None]], cleanup: Any
) -> tuple[int, int, float]:
    """``(done, failed, seconds)``: each thread runs ``prepare(index)`` before the clock starts,
    then the step it answered until the deadline, then ``cleanup()``."""
    done, failed = [0] * threads, [0] * threads
    barrier, deadline = threading.Barrier(threads + 1), [0.0]

    def work(index: int) -> None:
        try:
            step = prepare(index)
            barrier.wait()
            while time.monotonic() < deadline[0]:
                try:
                    step()
                    done[index] += 1
                except Exception:  # noqa: BLE001 - counted, the run goes on
                    failed[index] += 1
        finally:
            cleanup()

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    deadline[0] = time.monotonic() + seconds
    started = time.monotonic()
    barrier.wait()
    for worker in workers:
        worker.join()
    return sum(done), sum(failed), time.monotonic() - started


@contextlib.contextmanager
def without_outbox() -> Iterator[None]:
    """The engine posts without building or writing the postings' events, for the duration."""
    from outbox import events
    from transactions import run

    build, write = events.build, run.write_posting

    def write_without(*args: Any, events: Any = (), **kwargs: Any) -> bool:
        return write(*args, **kwargs)

    # no event, and so no rendering made in the engine (the answer would render it instead)
    events.build = lambda *args, **kwargs: SimpleNamespace(data=None)  # type: ignore[assignment]
    run.write_posting = write_without
    try:
        yield
    finally:
        events.build, run.write_posting = build, write


def engine_rate(
    ledgers: list[Any], *, accounts: int, threads: int = 4, seconds: float = 10, outbox: bool = True
) -> dict[str, Any]:
    from django.db import connection

    from ledgerproject import kept
    from transactions import engine

    def prepare(index: int) -> Callable[[], None]:
        rng = random.Random(index)

        def step() -> None:
            a, b = rng.sample(range(1, accounts + 1), 2)
            variables = {"amount": 1, "source": f"@b{a}", "destination": f"@b{b}"}
            request = engine.PostingRequest(template_code="TRANSFER", variables=variables)
            # As an API request's first attempt runs it: on the templates and accounts the
            # process keeps (none changes during the run, so none is found stale).
            with kept.allowed():
                engine.post(rng.choice(ledgers), request)

        return step

    with contextlib.nullcontext() if outbox else without_outbox():
        done, failed, elapsed = run_threads(threads, seconds, prepare, lambda: connection.close())
    unit = f"postings/s in-process, {threads} threads" + ("" if outbox else ", no outbox")
    return {"unit": unit, "units_per_s": round(done / elapsed, 1), "requests": done,
            "errors": failed, "status_errors": 0, "seconds": round(elapsed, 3),
            "p50_ms": None, "p99_ms": None}  # fmt: skip
