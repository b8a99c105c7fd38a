"""Run in a subprocess by test_pgbouncer.py: the service's settings with
``PGBOUNCER_TRANSACTION_POOLING=1``, ``DATABASE_URL`` pointing at PgBouncer in transaction mode,
and postings from several threads (more than the pool's server connections), an idempotent
replay, a batch, and ``check_ledger``'s checks (which stream operations with ``.iterator()``).
Prints one JSON line; exits non-zero on any failure."""

from __future__ import annotations

import json
import os
import sys
import threading

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ledgerproject.settings_test")

import django

django.setup()

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402

THREADS, POSTINGS = 8, 15


def main() -> int:
    database = settings.DATABASES["default"]
    assert database["OPTIONS"]["prepare_threshold"] is None, database
    assert database["DISABLE_SERVER_SIDE_CURSORS"] is True, database
    token, path = os.environ["POOL_TOKEN"], os.environ["POOL_LEDGER_PATH"]
    statuses: list[int] = []
    lock = threading.Lock()

    def post(client: Client, body: dict, **extra: str) -> object:
        return client.post(
            f"{path}/transactions", json.dumps(body), content_type="application/json", **extra
        )

    def work(index: int) -> None:
        client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
        try:
            for n in range(POSTINGS):
                source = "@hot" if n % 2 else f"@p{index}"
                body = {
                    "transactionTypeCode": "TRANSFER",
                    "variables": {"amount": 1, "source": source, "destination": f"@p{7 - index}"},
                }
                response = post(client, body)
                with lock:
                    statuses.append(response.status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    body = {
        "transactionTypeCode": "TRANSFER",
        "variables": {"amount": 5, "source": "@hot", "destination": "@p0"},
    }
    first = post(client, body, HTTP_IDEMPOTENCY_KEY="pool-1")
    again = post(client, body, HTTP_IDEMPOTENCY_KEY="pool-1")
    items = [body] * 20
    batch = client.post(
        f"{path}/transactions/batch",
        json.dumps({"transactions": items}),
        content_type="application/json",
    )
    listed = client.get(f"{path}/transactions?limit=5")

    from organizations.models import Ledger
    from transactions.integrity import ledger_check

    report = ledger_check(Ledger.objects.get(pk=path.rsplit("/", 1)[1]))
    summary = {
        "postings": statuses.count(201),
        "other": [s for s in statuses if s != 201],
        "replayed": again.headers.get("Idempotent-Replayed") == "true"
        and again.json()["id"] == first.json()["id"],
        "batch": batch.status_code,
        "list": listed.status_code,
        "violations": report.violations,
    }
    print(json.dumps(summary))
    ok = (
        summary["postings"] == THREADS * POSTINGS
        and summary["replayed"]
        and summary["batch"] == 201
        and summary["list"] == 200
        and report.ok
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
