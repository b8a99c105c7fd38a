"""The reference the engine is compared with in-process: django-hordak's
``Account.transfer_to``, 4 threads, each with its own connection, 2-leg transfers for a number
of seconds, on its own PostgreSQL database. django-hordak takes no locks and stores no balances.

It is not a dependency: run it with a throwaway virtual environment,

    python3 -m venv /tmp/hordak && /tmp/hordak/bin/pip install django-hordak "psycopg[binary]"
    /tmp/hordak/bin/python bench/hordak_compare.py postgres://postgres@127.0.0.1:5432 [seconds]

and compare its figure with the ``engine_spread`` row of ``make bench`` (docs/PERFORMANCE.md).
Each transfer runs in its own ``transaction.atomic()``, as a posting does."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import django
import psycopg
from django.conf import settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench.threads
from bench.threads import run_threads

SERVER = sys.argv[1] if len(sys.argv) > 1 else "postgres://postgres@127.0.0.1:5432"
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 10.0
THREADS, ACCOUNTS, NAME = 4, 100, "ledger_bench_hordak"

with psycopg.connect(f"{SERVER}/postgres", autocommit=True) as admin:
    admin.execute(f'DROP DATABASE IF EXISTS "{NAME}" WITH (FORCE)')
    admin.execute(f'CREATE DATABASE "{NAME}"')

settings.configure(
    INSTALLED_APPS=["django.contrib.contenttypes", "django.contrib.auth", "mptt", "hordak"],
    DATABASES={
        "default": {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": NAME,
            "HOST": SERVER.split("@")[1].split(":")[0],
            "PORT": SERVER.rsplit(":", 1)[1],
            "USER": SERVER.split("//")[1].split("@")[0],
            "CONN_MAX_AGE": 600,
        }
    },
    USE_TZ=True,
    DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
    DEFAULT_CURRENCY="EUR",
    CURRENCIES=["EUR"],
)
django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from djmoney.money import Money  # noqa: E402
from hordak.models import Account  # noqa: E402

call_command("migrate", verbosity=0)
accounts = [
    Account.objects.create(name=f"a{i}", type="AS", currencies=["EUR"]) for i in range(ACCOUNTS)
]
ids = [a.pk for a in accounts]


def prepare(index: int):
    rng = random.Random(index)
    mine = {pk: Account.objects.get(pk=pk) for pk in ids}

    def step() -> None:
        a, b = rng.sample(ids, 2)
        with transaction.atomic():
            mine[a].transfer_to(mine[b], Money(1, "EUR"))

    return step


done, failed, elapsed = run_threads(THREADS, SECONDS, prepare, connection.close)
assert not failed, f"{failed} transfers failed"
print(f"django-hordak transfer_to: {done / elapsed:.1f} transfers/s "
      f"({THREADS} threads, {elapsed:.1f} s)")  # fmt: skip
