"""POST .../transactions/batch: atomic and non-atomic batches, the same checks and errors as a
single posting, idempotency per item and per batch, and a constant number of queries."""

from __future__ import annotations

import io
import threading
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.concurrency.conftest import run_threads
from tests.conftest import Api, assert_error
from transactions import copies
from transactions.models import IdempotencyKey, Transaction


def pay(amount: int, fee: int = 0, source: str = "@alice", destination: str = "@bob", **extra):
    variables = {"amount": amount, "fee": fee, "source": source, "destination": destination}
    return {"transactionTypeCode": "PAYMENT_WITH_FEE", "variables": variables, **extra}


def fund(alias: str, amount: int, **extra: Any) -> dict[str, Any]:
    return {
        "transactionTypeCode": "FUND",
        "variables": {"amount": amount, "account": alias},
        **extra,
    }


def post_batch(book, items, atomic=True, **extra):
    return book.api.post(
        f"{book.url}/transactions/batch", {"transactions": items, "atomic": atomic}, **extra
    )


def check_ledger() -> None:
    call_command("check_ledger", stdout=io.StringIO(), stderr=io.StringIO())


def test_it_posts_an_atomic_batch_in_order(book):
    response = post_batch(book, [fund("@alice", 10_000), pay(2_500, 100), pay(1_000)])
    assert response.status_code == 201, response.content
    body = response.json()
    assert [tx["type"] for tx in body] == ["FUND", "PAYMENT_WITH_FEE", "PAYMENT_WITH_FEE"]
    assert all(tx["status"] == "SENT" for tx in body)
    assert body[1]["operations"][0]["balance"]["available"] == 10_000
    assert book.available("@alice") == 10_000 - 2_600 - 1_000
    assert book.available("@bob") == 3_500
    assert book.available("@fees/platform") == 100
    stored = book.api.get(f"{book.url}/transactions/{body[2]['id']}").json()
    assert stored == body[2]
    check_ledger()


def test_it_refuses_a_whole_atomic_batch_with_the_failing_index(book):
    book.fund("@alice", 1_000)
    before = Transaction.objects.count()
    response = post_batch(book, [pay(400), pay(400), pay(400), pay(1)])
    body = assert_error(response, 422, "0018")
    assert body["fields"]["index"] == "2"
    assert body["description"].startswith("transactions[2]: ")
    assert Transaction.objects.count() == before
    assert book.available("@alice") == 1_000


def test_it_answers_each_item_of_a_non_atomic_batch(book):
    items = [
        fund("@alice", 1_000),
        pay(900),
        pay(900),
        {"transactionTypeCode": "NOPE"},
        pay(50, destination="@nobody"),
        pay(100),
    ]
    response = post_batch(book, items, atomic=False)
    assert response.status_code == 200, response.content
    body = response.json()
    assert [item["index"] for item in body] == list(range(6))
    assert [item["status"] for item in body] == [201, 201, 422, 404, 422, 201]
    assert body[2]["error"]["code"] == "0018"
    assert body[3]["error"]["code"] == "0007"
    assert body[4]["error"]["code"] == "0085"
    assert body[5]["transaction"]["status"] == "SENT"
    assert "transaction" not in body[2] and "error" not in body[1]
    assert book.available("@alice") == 0
    check_ledger()


def test_it_gives_items_the_same_errors_as_single_postings(book):
    book.fund("@alice", 1_000)
    cases = [
        {"transactionTypeCode": "FUND", "variables": {"account": "@bob"}},
        pay(10, source="@bob", destination="@bob"),
        pay(10, parentTransactionId="0190a5e0-0000-7000-8000-000000000000"),
        pay(10_000),
    ]
    singles = [book.post(case).json() for case in cases]
    response = post_batch(book, cases, atomic=False)
    assert response.status_code == 200, response.content
    items = response.json()
    assert [item["error"]["code"] for item in items] == ["0009", "0090", "0021", "0018"]
    assert [item["error"] for item in items] == singles
    for index, case in enumerate(cases):
        response = post_batch(book, [fund("@bob", 1), case])
        body = response.json()
        assert response.status_code == items[index]["status"], body
        assert body["code"] == singles[index]["code"] and body["fields"]["index"] == "1"


@pytest.mark.parametrize("atomic", [True, False])
def test_an_item_that_does_not_match_the_schema_refuses_the_whole_batch(book, atomic):
    """Atomic or not: a malformed item is a malformed request (400 naming the item, the code a
    single posting gets), and nothing of the batch is posted. Only rules answer per item."""
    malformed = [
        ({"variables": {}}, "0009"),
        ({"transactionTypeCode": "FUND", "surprise": 1}, "0053"),
        (pay(10, pending="yes"), "0047"),
        ({"transactionTypeCode": 7}, "0047"),
        ({"transactionTypeCode": "FUND "}, "0047"),
        ({"transactionTypeCode": "FUND\n"}, "0047"),
        ({"transactionTypeCode": "a*b"}, "0047"),
        ("FUND", "0047"),
    ]
    for case, code in malformed:
        single = book.post(case)
        assert single.status_code == 400 and single.json()["code"] == code, single.content
        response = post_batch(book, [fund("@bob", 1), pay(10_000), case], atomic=atomic)
        body = assert_error(response, 400, code)
        assert body["fields"]["index"] == "2"
        assert body["description"] == f"transactions[2]: {single.json()['description']}"
    assert Transaction.objects.filter(type="FUND").count() == 0


def test_it_refuses_malformed_batches(book):
    url = f"{book.url}/transactions/batch"
    assert_error(book.api.post(url, {"transactions": []}), 400, "0047")
    assert_error(book.api.post(url, {"transactions": [fund("@bob", 1)] * 1001}), 400, "0047")
    assert_error(book.api.post(url, {"transactions": "all"}), 400, "0047")
    assert_error(book.api.post(url, {"atomic": True}), 400, "0009")
    assert_error(book.api.post(url, {"transactions": [fund("@bob", 1)], "x": 1}), 400, "0053")
    assert_error(
        book.api.post(url, {"transactions": [fund("@bob", 1)], "atomic": "no"}), 400, "0047"
    )
    too_long = fund("@bob", 1, idempotencyKey="k" * 256)
    body = assert_error(book.api.post(url, {"transactions": [too_long]}), 400, "0047")
    assert body["fields"]["index"] == "0"
    assert Transaction.objects.filter(type="FUND").count() == 0


def test_it_posts_a_thousand_items(book):
    items = [fund("@bob", 1)] * 1000
    response = post_batch(book, items)
    assert response.status_code == 201, response.content
    assert len(response.json()) == 1000
    assert book.available("@bob") == 1000
    check_ledger()


def test_it_replays_items_by_their_idempotency_key(book):
    first = post_batch(book, [fund("@alice", 500, idempotencyKey="a"), fund("@bob", 7)], False)
    assert first.status_code == 200, first.content
    again = post_batch(book, [fund("@alice", 500, idempotencyKey="a"), fund("@bob", 7)], False)
    items = again.json()
    assert items[0]["idempotentReplayed"] is True
    assert items[0]["transaction"] == first.json()[0]["transaction"]
    assert "idempotentReplayed" not in items[1]
    assert book.available("@alice") == 500 and book.available("@bob") == 14
    changed = post_batch(book, [fund("@alice", 501, idempotencyKey="a")], atomic=False)
    assert changed.json()[0]["status"] == 422
    assert changed.json()[0]["error"]["code"] == "0084"
    body = assert_error(post_batch(book, [fund("@alice", 501, idempotencyKey="a")]), 422, "0084")
    assert body["fields"]["index"] == "0"
    single = book.post(fund("@alice", 500), HTTP_IDEMPOTENCY_KEY="a")
    assert single.status_code == 201 and single.headers["Idempotent-Replayed"] == "true"
    assert single.json() == first.json()[0]["transaction"]


def test_it_answers_a_key_repeated_inside_one_batch_once(book):
    items = [fund("@bob", 5, idempotencyKey="k"), fund("@bob", 5, idempotencyKey="k")]
    response = post_batch(book, items, atomic=False)
    first, second = response.json()
    assert second["idempotentReplayed"] is True
    assert second["transaction"]["id"] == first["transaction"]["id"]
    assert book.available("@bob") == 5
    atomic = post_batch(
        book, [fund("@bob", 5, idempotencyKey="j"), fund("@bob", 6, idempotencyKey="j")]
    )
    assert_error(atomic, 422, "0084")
    assert IdempotencyKey.objects.filter(key="j").count() == 0


def test_it_replays_a_whole_batch_by_its_header_key(book):
    items = [fund("@bob", 3), fund("@alice", 4)]
    first = post_batch(book, items, atomic=False, HTTP_IDEMPOTENCY_KEY="batch-1")
    assert first.status_code == 200
    again = post_batch(book, items, atomic=False, HTTP_IDEMPOTENCY_KEY="batch-1")
    assert again.status_code == 200 and again.headers["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert book.available("@bob") == 3
    assert_error(post_batch(book, items, HTTP_IDEMPOTENCY_KEY="batch-1"), 422, "0084")
    atomic = post_batch(book, items, HTTP_IDEMPOTENCY_KEY="batch-2")
    replayed = post_batch(book, items, HTTP_IDEMPOTENCY_KEY="batch-2")
    assert atomic.status_code == replayed.status_code == 201
    assert replayed.json() == atomic.json() and book.available("@bob") == 6


def test_a_failed_atomic_batch_stores_no_key(book):
    items = [fund("@bob", 3, idempotencyKey="i"), pay(10)]
    assert_error(post_batch(book, items, HTTP_IDEMPOTENCY_KEY="b"), 422, "0018")
    assert not IdempotencyKey.objects.exists()
    book.fund("@alice", 10)
    assert post_batch(book, items, HTTP_IDEMPOTENCY_KEY="b").status_code == 201


def test_pending_items_commit_and_revert_like_single_ones(book):
    book.fund("@alice", 1_000)
    held = {**pay(300, 0), "transactionTypeCode": "PAYMENT_HELD"}
    response = post_batch(book, [held, held])
    assert response.status_code == 201, response.content
    first, second = response.json()
    assert first["status"] == "PRE_APPROVED"
    assert book.balance("@alice") == {"available": 400, "onHold": 600, "scale": 2}
    assert book.api.post(f"{book.url}/transactions/{first['id']}/commit").status_code == 200
    assert book.api.post(f"{book.url}/transactions/{second['id']}/revert").status_code == 201
    assert book.balance("@alice") == {"available": 700, "onHold": 0, "scale": 2}
    check_ledger()


def test_read_only_tokens_may_not_post_batches(book):
    from tests.conftest import make_token

    reader = Api(make_token("reader", read_only=True))
    response = reader.post(f"{book.url}/transactions/batch", {"transactions": [fund("@bob", 1)]})
    assert_error(response, 403, "0043")


@pytest.mark.parametrize("atomic", [True, False])
def test_the_number_of_queries_does_not_grow_with_the_batch(book, atomic):
    def queries(size: int) -> int:
        items = [fund("@alice", 1_000)] + [pay(1, source="@alice")] * (size - 1)
        with CaptureQueriesContext(connection) as captured:
            response = post_batch(book, items, atomic=atomic)
        assert response.status_code == (201 if atomic else 200), response.content
        return len(captured.captured_queries)

    queries(3)  # templates read once: on PostgreSQL they are then cached in the process
    small, large = queries(3), queries(60)
    if connection.vendor == "postgresql":
        assert large == small
    else:  # SQLite caps the variables of one statement, so bulk inserts come in chunks
        assert large <= small + 4


@pytest.mark.django_db(transaction=True)
@pytest.mark.postgres
@pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL: row locks")
def test_concurrent_overlapping_batches_neither_deadlock_nor_lose_updates(book):
    aliases = [f"@c{i}" for i in range(8)]
    for alias in aliases:
        book.account(alias)
        book.fund(alias, 100_000)

    def work(index: int, barrier: threading.Barrier) -> None:
        api = Api(book.api.token)
        items = [
            pay(1, source=aliases[(index + k) % 8], destination=aliases[(index + k + 3) % 8])
            for k in range(40)
        ]
        barrier.wait()
        for _ in range(5):
            response = api.post(f"{book.url}/transactions/batch", {"transactions": items})
            assert response.status_code == 201, response.content

    run_threads(6, work)
    assert sum(book.available(a) for a in aliases) == 8 * 100_000
    assert Transaction.objects.filter(type="PAYMENT_WITH_FEE").count() == 6 * 5 * 40
    check_ledger()


def _accounts(book, warm: bool) -> None:
    """@alice funded; with ``warm``, every account of a payment kept by this process (a
    payment posted), else none kept."""
    book.fund("@alice", 10_000)
    if warm:
        assert book.pay(1, 0).status_code == 201
    else:
        copies.kept_accounts.clear()


@pytest.mark.parametrize("warm", [True, False], ids=["accounts kept", "accounts not kept"])
def test_an_atomic_batch_answers_a_lower_items_funds_before_a_later_items_key(book, warm):
    # Item 1 repeats item 0's key with another body (refused when the keys are taken); item 0
    # cannot be paid (refused when the legs are applied): the lowest index answers.
    _accounts(book, warm)
    items = [pay(1_000_000, idempotencyKey="k"), pay(1, idempotencyKey="k")]
    body = assert_error(post_batch(book, items), 422, "0018")
    assert body["fields"]["index"] == "0"


@pytest.mark.parametrize("warm", [True, False], ids=["accounts kept", "accounts not kept"])
def test_an_item_whose_key_is_refused_answers_its_own_account_refusal(book, warm):
    # Item 1 repeats item 0's key with another body, and pays an account that may not receive:
    # its accounts are checked as if before its key was taken, so the account's refusal.
    _accounts(book, warm)
    bob = book.accounts["@bob"]["id"]
    assert (
        book.api.patch(f"{book.url}/accounts/{bob}", {"allowReceiving": False}).status_code == 200
    )
    items = [fund("@alice", 5, idempotencyKey="k"), pay(1, idempotencyKey="k")]
    body = assert_error(post_batch(book, items), 422, "0024")
    assert body["fields"]["index"] == "1"
    answer = post_batch(book, items, atomic=False)  # each on its own: the same answer for it
    assert answer.status_code == 200, answer.content
    assert [item["status"] for item in answer.json()] == [201, 422]
    assert answer.json()[1]["error"]["code"] == "0024"
