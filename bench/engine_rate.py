"""The engine's own rate, without HTTP: ``threads`` threads, each with its own database
connection, call ``transactions.engine.post`` for 2-leg transfers for ``seconds`` seconds.
``spread`` picks two random accounts per posting; ``hot`` always debits ``@hot`` (funded in
the seed), so every posting waits for the same balance row lock.

``outbox=False`` measures the same postings without their events (``without_outbox``: the
posting's event is neither rendered nor written), so that the outbox's cost on the posting path
is the ratio of two figures measured back to back in one process. Bench-only: the service
always writes its events."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

from bench.threads import run_threads


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
    run.write_posting = write_without  # type: ignore[assignment]
    try:
        yield
    finally:
        events.build, run.write_posting = build, write  # type: ignore[assignment]


def engine_rate(
    *,
    ledger_id: str,
    accounts: int,
    kind: str,
    threads: int = 4,
    seconds: float = 10,
    outbox: bool = True,
) -> dict[str, Any]:
    from django.db import connection

    from organizations.models import Ledger
    from transactions import engine

    ledger = Ledger.objects.select_related("organization").get(pk=ledger_id)

    def prepare(index: int) -> Callable[[], None]:
        rng = random.Random(index)

        def step() -> None:
            a, b = rng.sample(range(1, accounts + 1), 2)
            source = "@hot" if kind == "hot" else f"@b{a}"
            request = engine.PostingRequest(
                template_code="TRANSFER",
                variables={"amount": 1, "source": source, "destination": f"@b{b}"},
            )
            engine.post(ledger, request)

        return step

    with contextlib.nullcontext() if outbox else without_outbox():
        done, failed, elapsed = run_threads(threads, seconds, prepare, lambda: connection.close())
    return {
        "unit": f"postings/s in-process, {threads} threads, no HTTP"
        + ("" if outbox else ", without the outbox"),
        "units_per_s": round(done / elapsed, 1),
        "requests": done,
        "errors": failed,
        "status_errors": 0,
        "seconds": round(elapsed, 3),
        "p50_ms": None,
        "p99_ms": None,
    }
