"""The in-process rate, measured one way for the engine (``bench.engine_rate``) and for
django-hordak (``bench/hordak_compare.py``, which runs in its own virtual environment, so this
module imports nothing but the standard library): ``threads`` threads each prepare their own
step, wait for all the others, then run it until the deadline; every step counts once, as done
or as failed."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


def run_threads(
    threads: int,
    seconds: float,
    prepare: Callable[[int], Callable[[], None]],
    cleanup: Callable[[], None] = lambda: None,
) -> tuple[int, int, float]:
    """``(steps done, steps failed, seconds measured)``. ``prepare(index)`` runs in the thread
    before the clock starts and answers its step; ``cleanup`` runs in each thread at the end
    (closing its database connection, say)."""
    done, failed = [0] * threads, [0] * threads
    barrier = threading.Barrier(threads + 1)
    deadline = [0.0]

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
