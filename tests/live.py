"""A live service for tests that talk to it as a client would: its own database (a PostgreSQL
database named after the test run's, or an SQLite file), migrated, a token, and gunicorn on a
free port of 127.0.0.1. Stopped and its database dropped afterwards."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg
import requests
from django.conf import settings

from tests.net import free_port

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Live:
    base: str
    token: str


def _admin_connection() -> psycopg.Connection:
    database = settings.DATABASES["default"]
    return psycopg.connect(
        host=database.get("HOST") or None,
        port=database.get("PORT") or None,
        user=database.get("USER") or None,
        password=database.get("PASSWORD") or None,
        dbname="postgres",
        autocommit=True,
    )


@contextmanager
def _database(suffix: str, tmp_path: Path) -> Iterator[str]:
    """The DATABASE_URL of a fresh, empty database of the same kind as the test run's."""
    database = settings.DATABASES["default"]
    if database["ENGINE"] != "ledgerproject.backends.postgresql":
        yield f"sqlite:///{tmp_path / 'live.sqlite3'}"
        return
    name = f"{database['NAME']}_{suffix}"[:63]
    with _admin_connection() as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    user = database.get("USER") or ""
    auth = f"{user}:{database['PASSWORD']}@" if database.get("PASSWORD") else f"{user}@"
    host = f"{database.get('HOST') or '127.0.0.1'}:{database.get('PORT') or 5432}"
    try:
        yield f"postgres://{auth}{host}/{name}"
    finally:
        with _admin_connection() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def manage(env: dict[str, str], *args: str) -> str:
    """``manage.py args`` in a subprocess with ``env``; its standard output (it must succeed)."""
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@contextmanager
def live_service(suffix: str, tmp_path: Path) -> Iterator[Live]:
    with _database(suffix, tmp_path) as url:
        env = {
            **os.environ,
            "DATABASE_URL": url,
            "DJANGO_SETTINGS_MODULE": "ledgerproject.settings",
            "LEDGER_DEV_DEFAULTS": "1",
            "THROTTLE_READ_RATE": "off",
            "THROTTLE_WRITE_RATE": "off",
            "LOG_LEVEL": "ERROR",
        }
        env.pop("DEBUG", None)
        manage(env, "migrate", "--noinput")
        token = manage(env, "create_token", f"live-{suffix}").strip().splitlines()[-1]
        port = free_port(8300, 8400)
        log = (tmp_path / "gunicorn.log").open("ab")
        process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "ledgerproject.wsgi", "--bind",
             f"127.0.0.1:{port}", "--workers", "1", "--threads", "4"],
            cwd=ROOT, env=env, stdout=log, stderr=log, start_new_session=True,
        )  # fmt: skip
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                assert process.poll() is None, (tmp_path / "gunicorn.log").read_text()[-3000:]
                try:
                    if requests.get(f"{base}/health", timeout=1).status_code == 200:
                        break
                except requests.RequestException:
                    pass
                assert time.monotonic() < deadline, "gunicorn did not start"
                time.sleep(0.1)
            yield Live(base, token)
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=30)
            log.close()
