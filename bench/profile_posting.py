"""Profile the posting path in-process: ``python -m bench.profile_posting [N]``.

Builds a fresh bench database, then posts N transfers through the whole Django stack (test
client, middleware, DRF, authentication, tenancy, service, rendering) under pyinstrument and
prints the profile and the queries of one posting. This is what guided the optimisations in
bench/results/HISTORY.md."""

from __future__ import annotations

import json
import random
import sys
import time

from bench.database import DEFAULT_URL, migrate, recreate_database, setup_django

URL = DEFAULT_URL.replace("ledger_bench", "ledger_bench_profile")


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    recreate_database(URL)
    migrate(URL)
    setup_django(URL)
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from pyinstrument import Profiler

    from bench.seed import seed_ledger

    bench = seed_ledger(accounts=100)
    client = Client(HTTP_AUTHORIZATION=f"Bearer {bench.token}")
    rng = random.Random(7)

    def post() -> None:
        a, b = rng.sample(range(1, bench.accounts + 1), 2)
        body = {
            "transactionTypeCode": "TRANSFER",
            "variables": {"amount": 100, "source": f"@b{a}", "destination": f"@b{b}"},
        }
        response = client.post(
            f"{bench.path}/transactions", json.dumps(body), content_type="application/json"
        )
        assert response.status_code == 201, response.content

    for _ in range(200):
        post()
    with CaptureQueriesContext(connection) as queries:
        post()
    print(f"{len(queries.captured_queries)} queries per posting:")
    for query in queries.captured_queries:
        print("  ", query["sql"][:150])
    started = time.perf_counter()
    for _ in range(count):
        post()
    elapsed = time.perf_counter() - started
    print(f"{count} postings in {elapsed:.2f}s: {elapsed / count * 1000:.2f} ms each, unprofiled")
    profiler = Profiler(interval=0.0005)
    with profiler:
        for _ in range(count):
            post()
    print(profiler.output_text(unicode=False, color=False, show_all=False))


if __name__ == "__main__":
    main()
