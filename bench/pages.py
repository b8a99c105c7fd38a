"""The transaction list's first page against its 1,000th (limit 100), timed over HTTP against
the bench's service: keyset pagination should make a deep page cost what the first does."""

from __future__ import annotations

import json
import time
from typing import Any

from bench.httpload import Client, Target, percentile


def page_times(target: Target, ledger_id: Any, count: int) -> dict[str, Any]:
    """Median time of GET page 1 and page 1,000 (limit 100) of the transaction list, over
    ``count`` requests each after two unmeasured ones."""
    from django.db import connection

    from ledgerproject.api.pagination import encode_cursor

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT created_at, id FROM transactions_transaction WHERE ledger_id = %s "
            "ORDER BY created_at, id OFFSET 99899 LIMIT 1",
            [ledger_id],
        )
        row = cursor.fetchone()
    if row is None:  # a smoke run holds fewer than 100,000 transactions
        cursor_value = None
        page = "last"
    else:
        cursor_value = encode_cursor(row[0], row[1])
        page = 1000

    client = Client(target)

    def timed(query: str) -> tuple[list[float], int]:
        samples = []
        for _ in range(count + 2):
            started = time.perf_counter()
            status, body = client.send(("GET", f"{target.ledger_path}/transactions?{query}", ""))
            if status != 200:
                raise RuntimeError(f"page answered {status}: {body[:200]!r}")
            samples.append((time.perf_counter() - started) * 1000)
        return samples[2:], len(json.loads(body))

    first, first_rows = timed("limit=100")
    if cursor_value is None:
        later, later_rows = first, first_rows
    else:
        later, later_rows = timed(f"limit=100&cursor={cursor_value}")
    client.connection.close()  # a gunicorn worker holds one connection (bench/gunicorn_worker.py)
    return {
        "page_1_ms": round(percentile(first, 50), 2),
        "page_1_p95_ms": round(percentile(first, 95), 2),
        f"page_{page}_ms": round(percentile(later, 50), 2),
        f"page_{page}_p95_ms": round(percentile(later, 95), 2),
        "rows": [first_rows, later_rows],
        "ratio": round(percentile(later, 50) / percentile(first, 50), 3),
    }
