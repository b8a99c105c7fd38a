"""Concurrency stress on PostgreSQL: 32 threads, each with its own connection, for a bounded
time (``LEDGER_STRESS=1``: a minute), posting at random through the HTTP API: payments out of a
hot account, payments between accounts that may run short, holds, commits, reverts and cancels
racing on the same transactions, requests sharing idempotency keys, and the attacks an outside
review found: postings of one unit at scale 18 (which used to cap an account), dry runs of the
widest template the limits allow naming thousands of unknown variables (which used to burn
seconds of CPU), and crossing moves of organizations (which used to make cycles).

A sealer seals the ledger's journal all along. Afterwards: ``check_ledger`` passes (the
organization tree and the journal included), every entry sealed once; every answer was one the
API documents (never a 5xx); every transaction in the ledger was acknowledged to someone,
every acknowledged one is there exactly once, one per idempotency key; and the operations in
the ledger are exactly the ones the acknowledged answers showed, so a refused request left
nothing behind.
"""

from __future__ import annotations

import io
import random
import threading
import time
from collections import Counter
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection

from journal.models import Block
from journal.services import entries, seal
from organizations.integrity import tree_problems
from organizations.models import Ledger
from templates_dsl import limits
from tests.conftest import Api
from tests.reliability.conftest import run_threads, scaled, scaled_seconds
from tests.templates_dsl.test_limits import wide_template
from transactions.models import IdempotencyKey, Operation, Transaction

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.slow,
    pytest.mark.timeout(scaled(300, 3_600)),
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="needs PostgreSQL: real concurrent connections"
    ),
]

THREADS = 32
OTHERS = ["@bob", "@carol", "@dave", "@erin"]
KEYS = 24
# What each kind of request may answer: status -> allowed codes (None: a success).
ALLOWED: dict[str, dict[int, set[str] | None]] = {
    "pay": {201: None, 422: {"0018"}},
    "hold": {201: None, 422: {"0018"}},
    "keyed": {201: None, 409: {"0084"}, 422: {"0018"}},
    "commit": {200: None, 422: {"0099"}},
    "cancel": {201: None, 422: {"0099", "0087"}},
    "revert": {201: None, 422: {"0018", "0087", "0088", "0099"}},
    "tiny": {201: None},
    "wide": {400: {"0047"}},
    "move": {200: None, 422: {"0008"}},
}
NOT_POSTINGS = {"wide", "move"}
KINDS = ["pay", "pay", "pay", "hold", "keyed", "commit", "cancel", "revert", "revert"]
KINDS += ["tiny", "wide", "move"]
TINY = """(transaction-template v1 (chart-of-accounts-group-name G) (code TINY)
  (send BRL $amount|18 (source (from @external/BRL :amount BRL $amount|18)))
  (distribute (to $account :amount BRL $amount|18)))"""


# What the run must have seen before it may stop (the figures the test asserts on at the end).
NEEDED = {
    "hold 201",
    "commit 200",
    "keyed 201 replayed",
    "revert 201",
    "tiny 201",
    "wide 400",
    "move 200",
}


class Shared:
    """What the threads learn from each other: transactions to race on, and what has been seen
    (the run goes on past its time until every figure it needs has come up, within a limit: a
    slow machine makes fewer requests, and may not repeat a key in six seconds)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.held: list[str] = []
        self.sent: list[str] = []
        self.seen: set[str] = set()
        self.paid = 0

    def note(self, kind: str, status: int, replayed: bool) -> None:
        with self.lock:
            self.seen.add(f"{kind} {status}{' replayed' if replayed else ''}")
            self.paid += kind == "pay" and status == 201

    def covered(self) -> bool:
        with self.lock:
            return self.paid > THREADS and self.seen >= NEEDED

    def add(self, bucket: list[str], tx_id: str) -> None:
        with self.lock:
            bucket.append(tx_id)

    def pick(self, rng: random.Random, bucket: list[str]) -> str | None:
        with self.lock:
            return rng.choice(bucket[-20:]) if bucket else None


def _payment(source: str, destination: str, amount: int, fee: int, code: str) -> dict[str, Any]:
    variables = {"amount": amount, "fee": fee, "source": source, "destination": destination}
    return {"transactionTypeCode": code, "variables": variables}


def _keyed_bodies(rng: random.Random) -> list[tuple[str, dict[str, Any]]]:
    return [
        (
            f"stress-{i}",
            _payment("@alice", rng.choice(OTHERS), rng.randint(1, 500), 1, "PAYMENT_WITH_FEE"),
        )
        for i in range(KEYS)
    ]


def test_32_threads_of_random_postings_leave_a_consistent_ledger(book):
    for alias in OTHERS[1:]:
        book.account(alias)
    book.fund("@alice", 10**9)
    for alias in OTHERS:
        book.fund(alias, 5_000)
    book.post_template(TINY)
    book.post_template(wide_template(limits.MAX_VARIABLES - limits.MAX_LEGS + 1, limits.MAX_LEGS))
    wide = {f"v{i}": 1 for i in range(limits.MAX_VARIABLES)}
    wide.update({f"unknown{i}": 1 for i in range(20_000)})
    root = book.api.post("/v1/organizations", {"legalName": "T", "legalDocument": "1"}).json()
    movable = [
        book.api.post(
            "/v1/organizations",
            {"legalName": f"X{i}", "legalDocument": "1", "parentOrganizationId": root["id"]},
        ).json()["id"]
        for i in range(4)
    ]
    shared, keyed = Shared(), _keyed_bodies(random.Random(0))
    before = {str(pk) for pk in Transaction.objects.values_list("id", flat=True)}
    before_operations = {str(pk) for pk in Operation.objects.values_list("id", flat=True)}
    deadline = time.monotonic() + scaled_seconds(6, 60)
    limit = deadline + 60
    url = book.url

    def work(index: int, barrier: threading.Barrier) -> list[tuple[Any, ...]]:
        api, rng, log = Api(book.api.token), random.Random(index), []
        barrier.wait()
        while time.monotonic() < deadline or (not shared.covered() and time.monotonic() < limit):
            kind = rng.choice(KINDS)
            key = None
            if kind == "pay":
                source = "@alice" if rng.random() < 0.5 else rng.choice(OTHERS)
                destination = rng.choice([o for o in OTHERS if o != source])
                body = _payment(
                    source,
                    destination,
                    rng.randint(1, 3_000),
                    rng.randint(0, 9),
                    "PAYMENT_WITH_FEE",
                )
                response = api.post(f"{url}/transactions", body)
            elif kind == "hold":
                source = rng.choice(["@alice", *OTHERS])
                destination = rng.choice([o for o in OTHERS if o != source])
                body = _payment(source, destination, rng.randint(1, 2_000), 1, "PAYMENT_HELD")
                response = api.post(f"{url}/transactions", body)
            elif kind == "tiny":
                body = {
                    "transactionTypeCode": "TINY",
                    "variables": {"amount": 1, "account": rng.choice(OTHERS)},
                }
                response = api.post(f"{url}/transactions", body)
            elif kind == "wide":
                body = {"transactionTypeCode": "WIDE", "variables": wide}
                response = api.post(f"{url}/transactions?dryRun=true", body)
            elif kind == "move":
                child, parent = rng.sample(movable, 2)
                response = api.patch(f"/v1/organizations/{child}", {"parentOrganizationId": parent})
            elif kind == "keyed":
                key, body = rng.choice(keyed)
                response = api.post(f"{url}/transactions", body, HTTP_IDEMPOTENCY_KEY=key)
            else:
                bucket = shared.held if kind in {"commit", "cancel"} else shared.sent + shared.held
                tx_id = shared.pick(rng, bucket)
                if tx_id is None:
                    continue
                response = api.post(f"{url}/transactions/{tx_id}/{kind}")
            answer = response.json()
            replayed = response.get("Idempotent-Replayed") == "true"
            log.append((kind, key, response.status_code, answer, replayed))
            shared.note(kind, response.status_code, replayed)
            if response.status_code == 201 and kind in {"pay", "keyed", "revert"}:
                shared.add(shared.sent, answer["id"])
            if response.status_code == 201 and kind == "hold":
                shared.add(shared.held, answer["id"])
        return log

    # The journal is sealed all along, by a sealer racing the postings.
    ledger = Ledger.objects.get(pk=book.url.rsplit("/", 1)[1])
    stop_sealing = threading.Event()

    def sealing() -> None:
        try:
            while not stop_sealing.is_set():
                seal(ledger.organization_id, ledger.pk)
        finally:
            connection.close()

    sealer = threading.Thread(target=sealing)
    sealer.start()
    try:
        logs = run_threads(THREADS, work)
    finally:
        stop_sealing.set()
        sealer.join(timeout=60)
    seal(ledger.organization_id, ledger.pk)
    sealed = Block.objects.filter(organization_id=ledger.organization_id, ledger_id=ledger.pk)
    assert sum(b.entry_count for b in sealed) == entries(ledger.organization_id, ledger.pk).count()

    figures: Counter[str] = Counter()
    created: list[str] = []  # every transaction a 201 announced as new
    shown_operations = set(before_operations)
    by_key: dict[str, set[str]] = {}
    for kind, key, status, answer, replayed in (entry for log in logs for entry in log):
        allowed = ALLOWED[kind]
        assert status in allowed, (kind, status, answer)
        if allowed[status] is not None:
            assert answer["code"] in allowed[status], (kind, status, answer)
            figures[f"{kind} {status} {answer['code']}"] += 1
            continue
        figures[f"{kind} {status}{' replayed' if replayed else ''}"] += 1
        if kind in NOT_POSTINGS:
            continue
        shown_operations.update(op["id"] for op in answer["operations"])
        if key is not None:
            by_key.setdefault(key, set()).add(answer["id"])
        if kind != "commit" and not replayed:
            created.append(answer["id"])
    stored = {str(pk) for pk in Transaction.objects.values_list("id", flat=True)}
    assert len(created) == len(set(created)), "a transaction was announced as new twice"
    assert stored == before | set(created), "the ledger holds a transaction nobody was told of"
    stored_operations = {str(pk) for pk in Operation.objects.values_list("id", flat=True)}
    assert stored_operations == shown_operations, "an operation no answer showed"
    assert all(len(ids) == 1 for ids in by_key.values()), by_key
    assert IdempotencyKey.objects.count() == len(by_key)
    out = io.StringIO()
    call_command("check_ledger", stdout=out, stderr=io.StringIO())
    assert out.getvalue().rstrip().splitlines()[-1].startswith("OK"), out.getvalue()
    requests = sum(figures.values())
    print(f"stress: {THREADS} threads, {requests} requests,", dict(sorted(figures.items())))
    assert figures["pay 201"] > THREADS and figures["hold 201"] and figures["commit 200"]
    assert figures["keyed 201 replayed"] and figures["revert 201"]
    assert figures["tiny 201"] and figures["wide 400 0047"] and figures["move 200"]
    assert tree_problems() == []
