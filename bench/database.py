"""The bench's own PostgreSQL database: dropped, created and migrated afresh for every run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/ledger_bench"


def database_name(url: str) -> str:
    return urlsplit(url).path.lstrip("/")


def admin_url(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/postgres"))


def bench_env(url: str, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        DATABASE_URL=url,
        DJANGO_SETTINGS_MODULE="ledgerproject.settings_bench",
        LEDGER_DEV_DEFAULTS="1",
        **extra,
    )
    return env


def recreate_database(url: str) -> None:
    name = database_name(url)
    if not name.replace("_", "").isalnum():
        raise ValueError(f"refusing an odd database name: {name!r}")
    with psycopg.connect(admin_url(url), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def migrate(url: str) -> None:
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=ROOT,
        env=bench_env(url),
        check=True,
    )


def setup_django(url: str) -> None:
    """Configure Django in this process against the bench database."""
    os.environ.update(bench_env(url))
    import django

    django.setup()
