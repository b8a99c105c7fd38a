"""Crash safety on PostgreSQL: a real gunicorn (two workers, four threads each) on its own
database and port is driven by eight clients posting payments, each with its own idempotency
key, and is killed with SIGKILL (master and workers) in the middle of the load, then restarted;
several rounds (``LEDGER_STRESS=1``: ten).

After each restart every request that got no answer is sent again with its key. At the end:
``check_ledger`` passes (nothing half-written), every posting answered 201 before a kill is in
the database, and there is exactly one payment per key: nothing acknowledged was lost and
nothing was posted twice.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import pytest
import requests
from django.conf import settings

from tests.live import manage
from tests.net import free_port
from tests.reliability.conftest import scaled
from tests.transactions.conftest import FUND, PAYMENT

ROOT = Path(__file__).resolve().parents[2]
DATABASE = settings.DATABASES["default"]

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.slow,
    pytest.mark.timeout(scaled(300, 3_600)),
    pytest.mark.skipif(
        DATABASE["ENGINE"] != "ledgerproject.backends.postgresql",
        reason="needs PostgreSQL: gunicorn is killed while it writes to it",
    ),
]

CLIENTS = 8


def _pg(dbname: str) -> psycopg.Connection:
    return psycopg.connect(
        host=DATABASE.get("HOST") or None,
        port=DATABASE.get("PORT") or None,
        user=DATABASE.get("USER") or None,
        password=DATABASE.get("PASSWORD") or None,
        dbname=dbname,
        autocommit=True,
    )


@pytest.fixture
def crash_database() -> Iterator[str]:
    name = f"{DATABASE['NAME']}_crash"[:63]
    with _pg("postgres") as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    yield name
    with _pg("postgres") as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


class Server:
    """gunicorn as a child process; ``kill`` sends SIGKILL to the master and every worker."""

    def __init__(self, env: dict[str, str], port: int, log: Path) -> None:
        self.env, self.port, self.log = env, port, log
        self.base = f"http://127.0.0.1:{port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "gunicorn",
                    "ledgerproject.wsgi",
                    "--bind",
                    f"127.0.0.1:{self.port}",
                    "--workers",
                    "2",
                    "--threads",
                    "4",
                    "--worker-class",
                    "gthread",
                    "--graceful-timeout",
                    "1",
                ],
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=log,
                start_new_session=True,
            )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.log.read_text()[-3000:]
            try:
                if requests.get(f"{self.base}/health", timeout=1).status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.1)
        raise AssertionError("gunicorn did not start:\n" + self.log.read_text()[-3000:])

    def workers(self) -> list[int]:
        assert self.process is not None
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    stat = (entry / "stat").read_text()
                except OSError:
                    continue
                if int(stat.rsplit(")", 1)[1].split()[1]) == self.process.pid:
                    found.append(int(entry.name))
        return found

    def kill(self) -> int:
        assert self.process is not None
        victims = [self.process.pid, *self.workers()]
        for pid in victims:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.process.wait(timeout=30)
        return len(victims)


@dataclass
class Ledger:
    base: str
    token: str
    url: str = ""
    keys: itertools.count = field(default_factory=itertools.count)
    acknowledged: dict[str, str] = field(default_factory=dict)  # key -> transaction id
    unanswered: dict[str, dict[str, Any]] = field(default_factory=dict)  # key -> body
    lock: threading.Lock = field(default_factory=threading.Lock)
    figures: dict[str, int] = field(default_factory=lambda: {"in flight": 0, "replayed": 0})

    def call(self, method: str, path: str, body: Any = None, **headers: str) -> requests.Response:
        headers = {"Authorization": f"Bearer {self.token}", **headers}
        if isinstance(body, str):
            headers["Content-Type"] = "text/plain"
            return requests.request(
                method, f"{self.base}{path}", data=body.encode(), headers=headers, timeout=30
            )
        return requests.request(
            method, f"{self.base}{path}", json=body, headers=headers, timeout=30
        )

    def setup(self) -> None:
        org = self.call("POST", "/v1/organizations", {"legalName": "Crash", "legalDocument": "1"})
        org_id = org.json()["id"]
        ledger = self.call("POST", f"/v1/organizations/{org_id}/ledgers", {"name": "Crash"})
        self.url = f"/v1/organizations/{org_id}/ledgers/{ledger.json()['id']}"
        self.call(
            "POST", f"{self.url}/instruments", {"name": "Real", "type": "currency", "code": "BRL"}
        ).raise_for_status()
        for alias in ("@alice", "@bob", "@carol", "@fees/platform"):
            self.call(
                "POST", f"{self.url}/accounts", {"alias": alias, "assetCode": "BRL"}
            ).raise_for_status()
        for text in (FUND, PAYMENT):
            self.call("POST", f"{self.url}/transaction-templates", text).raise_for_status()
        fund = {"transactionTypeCode": "FUND", "variables": {"amount": 10**12, "account": "@alice"}}
        self.call("POST", f"{self.url}/transactions", fund).raise_for_status()

    def post(self, key: str, body: dict[str, Any]) -> bool:
        """Send one keyed payment; False when the server did not answer."""
        with self.lock:
            self.unanswered[key] = body
        try:
            response = self.call(
                "POST", f"{self.url}/transactions", body, **{"Idempotency-Key": key}
            )
        except requests.RequestException:
            return False
        assert response.status_code == 201, (response.status_code, response.text[:500])
        with self.lock:
            if response.headers.get("Idempotent-Replayed") == "true":
                self.figures["replayed"] += 1  # committed before the kill, answer lost with it
            previous = self.acknowledged.setdefault(key, response.json()["id"])
            assert previous == response.json()["id"], (key, previous, response.text[:300])
            self.unanswered.pop(key, None)
        return True

    def drive(self, index: int, stop: threading.Event) -> None:
        rng = random.Random(index)
        while not stop.is_set():
            key = f"crash-{index}-{next(self.keys)}"
            variables = {
                "amount": rng.randint(1, 10_000),
                "fee": rng.randint(0, 50),
                "source": "@alice",
                "destination": rng.choice(["@bob", "@carol"]),
            }
            if not self.post(
                key, {"transactionTypeCode": "PAYMENT_WITH_FEE", "variables": variables}
            ):
                return


def test_acknowledged_postings_survive_kill_9(crash_database, tmp_path):
    user = DATABASE.get("USER") or ""
    auth = f"{user}:{DATABASE['PASSWORD']}@" if DATABASE.get("PASSWORD") else f"{user}@"
    host = f"{DATABASE.get('HOST') or '127.0.0.1'}:{DATABASE.get('PORT') or 5432}"
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{auth}{host}/{crash_database}",
        "DJANGO_SETTINGS_MODULE": "ledgerproject.settings",
        "LEDGER_DEV_DEFAULTS": "1",
        "THROTTLE_READ_RATE": "off",
        "THROTTLE_WRITE_RATE": "off",
        "LOG_LEVEL": "ERROR",
    }
    env.pop("DEBUG", None)
    manage(env, "migrate", "--noinput")
    token = manage(env, "create_token", "crash").strip().splitlines()[-1]
    server = Server(env, free_port(8200, 8300), tmp_path / "gunicorn.log")
    server.start()
    ledger = Ledger(base=server.base, token=token)
    rounds, killed = scaled(3, 10), 0
    try:
        ledger.setup()
        for round_ in range(rounds):
            stop = threading.Event()
            clients = [
                threading.Thread(target=ledger.drive, args=(i, stop)) for i in range(CLIENTS)
            ]
            for client in clients:
                client.start()
            time.sleep(0.8 + 0.6 * random.Random(round_).random())
            killed += server.kill()
            stop.set()
            for client in clients:
                client.join(timeout=60)
                assert not client.is_alive()
            server.start()
            lost = dict(ledger.unanswered)
            ledger.figures["in flight"] += len(lost)
            for key, body in lost.items():
                assert ledger.post(key, body), f"no answer after the restart for {key}"
            assert not ledger.unanswered
        payments = _payments(crash_database)
        assert payments == set(ledger.acknowledged.values())
        assert len(payments) == len(ledger.acknowledged)
        report = manage(env, "check_ledger")
        assert report.rstrip().splitlines()[-1].startswith("OK"), report
    finally:
        if server.process is not None and server.process.poll() is None:
            server.kill()
    print(
        f"crash safety: {rounds} rounds, {killed} processes killed with SIGKILL, "
        f"{len(ledger.acknowledged)} payments acknowledged, all present once; "
        f"{ledger.figures['in flight']} requests in flight at a kill, resent with their key, "
        f"{ledger.figures['replayed']} of them had committed (answered as replays)"
    )


def _payments(database: str) -> set[str]:
    with _pg(database) as conn:
        rows = conn.execute(
            "SELECT id FROM transactions_transaction WHERE type = %s", ["PAYMENT_WITH_FEE"]
        ).fetchall()
    return {str(row[0]) for row in rows}
