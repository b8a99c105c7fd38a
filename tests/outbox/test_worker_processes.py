"""``manage.py deliver_webhooks`` as real processes on PostgreSQL, against a receiver on
127.0.0.1: a worker killed with SIGKILL in the middle of a delivery and restarted delivers every
event (duplicates allowed, losses not), and two workers running at once never send one delivery
at the same time (each delivery is sent exactly once when nothing fails)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.db import connection

from outbox.models import Delivery, Event
from tests.outbox.receiver import Receiver

ROOT = Path(__file__).resolve().parents[2]
DATABASE = settings.DATABASES["default"]

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(300),
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="needs PostgreSQL: worker processes share the database with the test",
    ),
]


@pytest.fixture(autouse=True)
def receivers_on_loopback(settings: Any) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = True  # as the workers' environment allows


def _worker(log: Path) -> subprocess.Popen[bytes]:
    url = (
        f"postgres://{DATABASE['USER']}@{DATABASE['HOST'] or '127.0.0.1'}:"
        f"{DATABASE['PORT'] or 5432}/{DATABASE['NAME']}"
    )
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "LEDGER_DEV_DEFAULTS": "1",
        "LEDGER_WEBHOOK_ALLOW_PRIVATE_NETWORKS": "1",
        "LEDGER_WEBHOOK_BACKOFF_BASE": "0.05",
        "LEDGER_WEBHOOK_BACKOFF_MAX": "0.2",
        # A killed worker's attempt is recovered once its lease lapses: the deadline plus 30 s.
        "LEDGER_WEBHOOK_TIMEOUT": "2",
        "LEDGER_AMQP_URL": "",
    }
    return subprocess.Popen(
        [sys.executable, "manage.py", "deliver_webhooks", "--interval", "0.1"],
        cwd=ROOT,
        env=env,
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
    )


def _wait(condition: Any, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _accounts(book: Any, count: int) -> set[str]:
    for index in range(count):
        book.account(f"@w{index}")
    return {str(e) for e in Event.objects.filter(type="account.created").values_list(
        "event_id", flat=True).filter(data__alias__startswith="@w")}  # fmt: skip


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


def test_a_worker_killed_mid_delivery_loses_nothing(book, tmp_path):
    with Receiver(fail_first=1, delay=0.1) as receiver:
        hook = book.api.post(f"{book.url}/webhooks",
                             {"url": receiver.url, "eventTypes": ["account.created"]})  # fmt: skip
        assert hook.status_code == 201, hook.content
        wanted = _accounts(book, 30)
        first = _worker(tmp_path / "worker.log")
        try:
            _wait(lambda: len(receiver.accepted_events()) >= 5, 60, "some deliveries")
            _wait(lambda: bool(receiver.in_flight), 10, "a delivery in flight")
            first.send_signal(signal.SIGKILL)  # in the middle of an answer
            first.wait(10)
        finally:
            _stop(first)
        assert receiver.accepted_events() < wanted, "the kill came after the last delivery"
        second = _worker(tmp_path / "worker.log")
        try:
            _wait(lambda: receiver.accepted_events() >= wanted, 120, "every event delivered")
            _wait(
                lambda: not Delivery.objects.exclude(status=Delivery.SUCCEEDED).exists(),
                30,
                "every delivery recorded as sent",
            )
        finally:
            _stop(second)
    assert receiver.accepted_events() == wanted
    assert Delivery.objects.count() == len(wanted)


def test_two_workers_never_send_one_delivery_at_once(book, tmp_path):
    with Receiver(delay=0.05) as receiver:
        hook = book.api.post(f"{book.url}/webhooks",
                             {"url": receiver.url, "eventTypes": ["account.created"]})  # fmt: skip
        assert hook.status_code == 201, hook.content
        wanted = _accounts(book, 40)
        workers = [_worker(tmp_path / f"w{i}.log") for i in range(2)]
        try:
            _wait(lambda: receiver.accepted_events() >= wanted, 120, "every event delivered")
            _wait(
                lambda: not Delivery.objects.exclude(status=Delivery.SUCCEEDED).exists(),
                30,
                "every delivery recorded as sent",
            )
        finally:
            for worker in workers:
                _stop(worker)
    assert receiver.overlaps == []
    delivered = [r["headers"]["Ledger-Delivery-Id"] for r in receiver.requests]
    assert len(delivered) == len(set(delivered)) == len(wanted)  # none sent twice
