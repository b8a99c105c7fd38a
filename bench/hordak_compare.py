"""The engine's in-process reference: django-hordak's ``transfer_to`` from 4 threads, each transfer
in its own ``transaction.atomic()`` as a posting is, on its own database (django-hordak takes no
lock and keeps no balance). Not a dependency: ``make bench`` installs it in HORDAK_VENV and
``bench.run --hordak-python`` runs ``python bench/hordak_compare.py postgres://SERVER``: set
up, it prints ``ready``, then for each number of seconds read on a line measures that long and
prints the figures, so that the runner alternates it with the engine's slices."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from urllib.parse import urlsplit

import django
import psycopg
from django.conf import settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.engine_rate import run_threads

SERVER = urlsplit(sys.argv[1] if sys.argv[1:] else "postgres://postgres@127.0.0.1:5432")
NAME = "ledger_bench_hordak"
with psycopg.connect(SERVER._replace(path="/postgres").geturl(), autocommit=True) as admin:
    admin.execute(f'DROP DATABASE IF EXISTS "{NAME}" WITH (FORCE)')
    admin.execute(f'CREATE DATABASE "{NAME}"')
database = {"ENGINE": "django.db.backends.postgresql", "NAME": NAME, "HOST": SERVER.hostname,
            "PORT": SERVER.port or 5432, "USER": SERVER.username, "CONN_MAX_AGE": 600}  # fmt: skip
settings.configure(
    INSTALLED_APPS=["django.contrib.contenttypes", "django.contrib.auth", "mptt", "hordak"],
    DATABASES={"default": database}, USE_TZ=True, DEFAULT_CURRENCY="EUR", CURRENCIES=["EUR"],
    DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
)  # fmt: skip
django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from djmoney.money import Money  # type: ignore[import-not-found]  # noqa: E402
from hordak.models import Account  # type: ignore[import-not-found]  # noqa: E402

call_command("migrate", verbosity=0)
ids = [Account.objects.create(name=f"a{i}", type="AS", currencies=["EUR"]).pk for i in range(100)]
connection.close()


def prepare(index: int) -> object:
    rng, mine = random.Random(index), {pk: Account.objects.get(pk=pk) for pk in ids}

    def step() -> None:
        a, b = rng.sample(ids, 2)
        with transaction.atomic():
            mine[a].transfer_to(mine[b], Money(1, "EUR"))

    return step


print("ready", flush=True)
for line in sys.stdin:  # the seconds to measure for
    done, failed, elapsed = run_threads(4, float(line), prepare, lambda: connection.close())  # type: ignore[arg-type]
    print(json.dumps({"unit": "django-hordak transfer_to/s in-process, 4 threads",
                      "units_per_s": round(done / elapsed, 1), "requests": done, "errors": failed,
                      "status_errors": 0, "seconds": round(elapsed, 3), "p50_ms": None,
                      "p99_ms": None}), flush=True)  # fmt: skip
