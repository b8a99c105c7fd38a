"""Postings, idempotency keys, commits and reverts racing on PostgreSQL: no lost update, no
deadlock, exactly one winner."""

from __future__ import annotations

import io
import random
import threading
import time

import pytest
from django.core.management import call_command
from django.db import connection, transaction

from organizations.models import Account, Balance
from tests.concurrency.conftest import run_threads
from tests.conftest import Api
from transactions import copies, run
from transactions.models import Transaction

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="needs PostgreSQL: row locks and concurrent connections",
    ),
]

THREADS = 16


def _check_ledger() -> str:
    out = io.StringIO()
    call_command("check_ledger", stdout=out, stderr=io.StringIO())
    return out.getvalue()


def _pay(api, url, source, destination, amount, fee, **extra):
    variables = {"amount": amount, "fee": fee, "source": source, "destination": destination}
    return api.post(
        f"{url}/transactions",
        {"transactionTypeCode": "PAYMENT_WITH_FEE", "variables": variables},
        **extra,
    )


def test_it_loses_no_update_with_a_hot_account(book):
    for alias in ("@carol", "@dave"):
        book.account(alias)
    start = {"@alice": 1_000_000, "@bob": 1_000, "@carol": 1_000, "@dave": 1_000}
    for alias, amount in start.items():
        book.fund(alias, amount)
    others = ["@bob", "@carol", "@dave"]

    def work(index, barrier):
        api = Api(book.api.token)
        rng = random.Random(index)
        done, refused = [], 0
        barrier.wait()
        for _ in range(20):
            if index % 2 == 0:
                source, destination = "@alice", rng.choice(others)
            else:
                source, destination = rng.sample(others, 2)
            amount, fee = rng.randint(1, 400), rng.randint(0, 5)
            response = _pay(api, book.url, source, destination, amount, fee)
            if response.status_code == 201:
                done.append((source, destination, amount, fee, response.json()["id"]))
            else:
                assert response.status_code == 422, response.content
                assert response.json()["code"] == "0018"
                refused += 1
        return done, refused

    results = run_threads(THREADS, work)
    expected = dict(start, **{"@fees/platform": 0})
    ids = []
    for done, _ in results:
        for source, destination, amount, fee, tx_id in done:
            expected[source] -= amount + fee
            expected[destination] += amount
            expected["@fees/platform"] += fee
            ids.append(tx_id)
    assert len(ids) == len(set(ids))
    for alias, amount in expected.items():
        assert book.available(alias) == amount, alias
    assert Transaction.objects.filter(type="PAYMENT_WITH_FEE").count() == len(ids)
    assert sum(len(done) for done, _ in results) > THREADS * 10
    assert "OK" in _check_ledger()


def test_it_posts_once_for_one_idempotency_key(book):
    body = {"transactionTypeCode": "FUND", "variables": {"amount": 7, "account": "@alice"}}

    def work(index, barrier):
        api = Api(book.api.token)
        barrier.wait()
        response = api.post(f"{book.url}/transactions", body, HTTP_IDEMPOTENCYKEY="same")
        return response.status_code, response.json()

    results = run_threads(THREADS, work)
    statuses = [status for status, _ in results]
    assert set(statuses) <= {201, 409}, statuses
    assert all(b["code"] == "0084" for s, b in results if s == 409)
    assert len({b["id"] for s, b in results if s == 201}) == 1
    assert Transaction.objects.filter(type="FUND").count() == 1
    assert book.available("@alice") == 7
    again = book.api.post(f"{book.url}/transactions", body, HTTP_IDEMPOTENCYKEY="same")
    assert again["Idempotent-Replayed"] == "true"


@pytest.mark.parametrize("warm", [True, False], ids=["accounts kept", "accounts not kept"])
def test_a_repeat_while_the_first_runs_is_409_at_once(book, monkeypatch, warm):
    # The first request is held inside its database transaction, its balances locked. The key
    # is taken before the balances are locked, so the repeat is refused at once instead of
    # waiting for the first to commit and then replaying it.
    body = {"transactionTypeCode": "FUND", "variables": {"amount": 7, "account": "@alice"}}
    if warm:
        book.fund("@alice", 1)
    else:
        copies.kept_accounts.clear()
    entered, release = threading.Event(), threading.Event()
    write = run.write_posting

    def held_write(*args, **kwargs):
        entered.set()
        release.wait(timeout=30)
        return write(*args, **kwargs)

    monkeypatch.setattr(run, "write_posting", held_write)

    def work(index, barrier):
        api = Api(book.api.token)
        if index == 0:
            response = api.post(f"{book.url}/transactions", body, HTTP_IDEMPOTENCYKEY="k")
            return response.status_code, response.json(), None
        assert entered.wait(timeout=30)
        started = time.monotonic()
        response = api.post(f"{book.url}/transactions", body, HTTP_IDEMPOTENCYKEY="k")
        waited = time.monotonic() - started
        release.set()
        return response.status_code, response.json(), waited

    first, repeat = run_threads(2, work)
    assert first[0] == 201, first
    assert repeat[0] == 409 and repeat[1]["code"] == "0084", repeat
    assert repeat[2] < 10, repeat
    assert book.available("@alice") == 7 + (1 if warm else 0)


def _while_locked(book, alias, call):
    """``call()`` while another connection holds ``alias``'s balance row locked; answers its
    response and how long it took (the lock is let go once it answered, or after 30 s)."""
    held, done = threading.Event(), threading.Event()

    def work(index, barrier):
        if index == 0:
            account = Account.objects.get(alias=alias)
            with transaction.atomic():  # by the organization: Citus routes the lock to its node
                Balance.objects.select_for_update().get(
                    organization_id=account.organization_id, account_id=account.pk
                )
                held.set()
                done.wait(timeout=30)
            return None
        assert held.wait(timeout=30)
        started = time.monotonic()
        try:
            response = call()
        finally:
            done.set()
        return response, time.monotonic() - started

    return run_threads(2, work)[1]


def test_a_pending_posting_does_not_wait_for_its_destinations_balance(book):
    # A hold changes only its source's balance, so it locks only that one: many holds paying
    # one merchant run side by side.
    book.fund("@alice", 10_000)
    response, waited = _while_locked(book, "@bob", lambda: book.pay(100, 1, pending=True))
    assert response.status_code == 201, response.content
    assert waited < 10, waited
    assert book.balance("@alice")["onHold"] == 101


def test_an_atomic_batch_refused_before_its_locks_waits_for_none(book):
    book.fund("@alice", 10_000)
    items = [
        {"transactionTypeCode": "FUND", "variables": {"amount": 5, "account": "@alice"}},
        {"transactionTypeCode": "NO_SUCH_TEMPLATE", "variables": {}},
    ]
    url = f"{book.url}/transactions/batch"
    call = lambda: book.api.post(url, {"transactions": items, "atomic": True})  # noqa: E731
    response, waited = _while_locked(book, "@alice", call)
    assert response.status_code == 404 and response.json()["fields"]["index"] == "1"
    assert waited < 10, waited


def _race(book, actions):
    """Race ``actions`` (pairs of endpoint names) over fresh pending transactions."""
    book.fund("@alice", 100_000)
    pending = [book.pay(100, 1, pending=True).json()["id"] for _ in actions]

    def work(index, barrier):
        api = Api(book.api.token)
        tx_id, action = pending[index // 2], actions[index // 2][index % 2]
        barrier.wait()
        response = api.post(f"{book.url}/transactions/{tx_id}/{action}")
        return tx_id, index % 2, response.status_code, response.json().get("code")

    results = run_threads(len(pending) * 2, work)
    return [(tx_id, sorted((i, s, c) for t, i, s, c in results if t == tx_id)) for tx_id in pending]


@pytest.mark.parametrize("pair", [("commit", "cancel"), ("commit", "commit"), ("cancel", "cancel")])
def test_it_lets_exactly_one_of_two_racing_settlements_win(book, pair):
    for tx_id, outcome in _race(book, [pair] * 6):
        wins = [s for _, s, _ in outcome if s in (200, 201)]
        losers = [c for _, s, c in outcome if s not in (200, 201)]
        assert len(wins) == 1, outcome
        assert losers in (["0099"], ["0087"]), outcome
        status = Transaction.objects.get(pk=tx_id).status
        winner = pair[next(i for i, s, _ in outcome if s in (200, 201))]
        assert status == ("SENT" if winner == "commit" else "CANCELED")
    assert "OK" in _check_ledger()


def test_it_serializes_a_commit_racing_a_revert(book):
    """Either the revert cancels the hold and the commit is refused, or the commit lands first
    and the revert then reverts the committed transaction: one of the two serial orders, never
    a hold both settled and released."""
    for tx_id, outcome in _race(book, [("commit", "revert")] * 8):
        (_, commit_status, commit_code), (_, revert_status, _) = outcome
        assert revert_status == 201, outcome
        original = Transaction.objects.get(pk=tx_id)
        if commit_status == 200:
            assert original.status == "SENT"
        else:
            assert (commit_status, commit_code) == (422, "0099")
            assert original.status == "CANCELED"
        assert Transaction.objects.filter(parent_id=tx_id, is_reversal=True).count() == 1
    assert book.balance("@alice")["onHold"] == 0
    assert book.available("@alice") == 100_000
    assert "OK" in _check_ledger()


def test_it_reverts_once_under_a_stampede(book):
    book.fund("@alice", 1_000)
    tx_id = book.pay(100, 1).json()["id"]

    def work(index, barrier):
        api = Api(book.api.token)
        barrier.wait()
        response = api.post(f"{book.url}/transactions/{tx_id}/revert")
        return response.status_code, response.json().get("code")

    results = run_threads(THREADS, work)
    assert sorted(s for s, _ in results).count(201) == 1
    assert {c for s, c in results if s != 201} == {"0087"}
    assert book.available("@alice") == 1_000
    assert "OK" in _check_ledger()


def test_it_never_posts_into_an_instrument_deleted_meanwhile(book):
    codes = [f"C{i}" for i in range(8)]
    instruments = {}
    for code in codes:
        instruments[code] = book.api.post(
            f"{book.url}/instruments", {"name": code, "type": "others", "code": code}
        ).json()["id"]
        book.api.post(f"{book.url}/accounts", {"alias": f"@{code.lower()}", "assetCode": code})
        book.post_template(
            f"(transaction-template v1 (chart-of-accounts-group-name G) (code FUND_{code})"
            f" (send {code} $a|0 (source (from @external/{code} :amount {code} $a|0)))"
            f" (distribute (to @{code.lower()} :amount {code} $a|0)))"
        )

    def work(index, barrier):
        api = Api(book.api.token)
        code = codes[index // 2]
        barrier.wait()
        if index % 2 == 0:
            response = api.post(
                f"{book.url}/transactions",
                {"transactionTypeCode": f"FUND_{code}", "variables": {"a": 5}},
            )
            return code, "post", response.status_code
        response = api.delete(f"{book.url}/instruments/{instruments[code]}")
        return code, "delete", response.status_code

    results = run_threads(len(codes) * 2, work)
    for code in codes:
        outcome = {action: status for c, action, status in results if c == code}
        assert outcome in ({"post": 201, "delete": 422}, {"post": 422, "delete": 204}), outcome
    assert "OK" in _check_ledger()


def test_it_never_deadlocks_a_child_posting_against_its_parents_revert(book):
    """A posting naming a parent locks its balances, then (at COMMIT) checks the parent's key;
    a revert of that parent locks the parent row, then the same balances. The parent lock is
    FOR NO KEY UPDATE, so the key check never waits on it."""
    book.fund("@alice", 100_000)
    parents = [book.pay(10, 0).json()["id"] for _ in range(8)]

    def work(index, barrier):
        api = Api(book.api.token)
        parent = parents[index // 2]
        barrier.wait()
        if index % 2 == 0:
            body = {
                "transactionTypeCode": "PAYMENT_WITH_FEE",
                "parentTransactionId": parent,
                "variables": {"amount": 5, "fee": 0, "source": "@bob", "destination": "@alice"},
            }
            response = api.post(f"{book.url}/transactions", body)
        else:
            response = api.post(f"{book.url}/transactions/{parent}/revert")
        return response.status_code

    statuses = run_threads(len(parents) * 2, work)
    assert all(status in (201, 422) for status in statuses), statuses
    assert "OK" in _check_ledger()


def test_it_never_credits_an_account_deleted_meanwhile(book):
    aliases = [f"@empty{i}" for i in range(8)]
    ids = {alias: book.account(alias)["id"] for alias in aliases}

    def work(index, barrier):
        api = Api(book.api.token)
        alias = aliases[index // 2]
        barrier.wait()
        if index % 2 == 0:
            body = {"transactionTypeCode": "FUND", "variables": {"amount": 5, "account": alias}}
            return alias, "post", api.post(f"{book.url}/transactions", body).status_code
        return alias, "delete", api.delete(f"{book.url}/accounts/{ids[alias]}").status_code

    results = run_threads(len(aliases) * 2, work)
    for alias in aliases:
        outcome = {action: status for a, action, status in results if a == alias}
        assert outcome in ({"post": 201, "delete": 422}, {"post": 422, "delete": 204}), outcome
    assert "OK" in _check_ledger()
