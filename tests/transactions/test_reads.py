"""Transaction reads, list filters, account transactions and statements, balances in time."""

from __future__ import annotations

import datetime as dt

from django.utils import timezone

from tests.conftest import assert_error


def _ids(response):
    assert response.status_code == 200, response.content
    return [tx["id"] for tx in response.json()]


def test_it_gets_one_transaction_with_operations(book):
    tx = book.fund("@alice", 100)
    got = book.api.get(f"{book.url}/transactions/{tx['id']}")
    assert got.json() == tx


def test_it_filters_the_transaction_list(book):
    fund = book.fund("@alice", 1_000)
    pay = book.pay(100, 1, metadata={"order": "42"}).json()
    held = book.pay(10, 0, pending=True).json()
    reversal = book.api.post(f"{book.url}/transactions/{pay['id']}/revert").json()
    url = f"{book.url}/transactions"
    assert _ids(book.api.get(url)) == [fund["id"], pay["id"], held["id"], reversal["id"]]
    assert _ids(book.api.get(url, {"type": "FUND"})) == [fund["id"]]
    assert _ids(book.api.get(url, {"status": "PRE_APPROVED"})) == [held["id"]]
    assert _ids(book.api.get(f"{url}?status=PRE_APPROVED&status=SENT")) == _ids(book.api.get(url))
    assert _ids(book.api.get(url, {"parentTransactionId": pay["id"]})) == [reversal["id"]]
    assert _ids(book.api.get(url, {"metadata.order": "42"})) == [pay["id"], reversal["id"]]
    assert _ids(book.api.get(url, {"assetCode": "USD"})) == []
    today = timezone.now().date().isoformat()
    assert len(_ids(book.api.get(url, {"beginDate": today, "endDate": today}))) == 4
    yesterday = (timezone.now() - dt.timedelta(days=1)).date().isoformat()
    assert _ids(book.api.get(url, {"endDate": yesterday})) == []
    assert _ids(book.api.get(url, {"beginDate": "2020-01-01T00:00:00+00:00"})) != []
    assert_error(book.api.get(url, {"beginDate": "yesterday"}), 400, "0077")
    assert_error(book.api.get(url, {"parentTransactionId": "x"}), 400, "0082")


def test_it_lists_transactions_in_constant_queries(book, django_assert_max_num_queries):
    book.fund("@alice", 10_000)
    for _ in range(10):
        book.pay(10, 1)
    with django_assert_max_num_queries(6):
        assert len(_ids(book.api.get(f"{book.url}/transactions"))) == 11


def test_it_pages_transactions(book):
    for _ in range(5):
        book.fund("@alice", 1)
    first = book.api.get(f"{book.url}/transactions", {"limit": 2})
    assert len(first.json()) == 2 and 'rel="next"' in first["Link"]


def test_it_lists_an_accounts_transactions_and_statement(book):
    book.fund("@alice", 1_000)
    book.fund("@bob", 1_000)
    pay = book.pay(100, 1).json()
    alice = book.accounts["@alice"]["id"]
    txs = _ids(book.api.get(f"{book.url}/accounts/{alice}/transactions"))
    assert len(txs) == 2 and pay["id"] in txs
    ops = book.api.get(f"{book.url}/accounts/{alice}/operations").json()
    assert [op["balanceAfter"]["available"] for op in ops] == [1_000, 899]
    assert_error(book.api.get(f"{book.url}/accounts/nope/operations"), 404, "0007")


def test_it_answers_the_balance_at_a_moment(book):
    book.fund("@alice", 1_000)
    between = timezone.now()
    book.fund("@alice", 500)
    alice = book.accounts["@alice"]["id"]
    url = f"{book.url}/accounts/{alice}/balance"
    assert book.api.get(url, {"at": between.isoformat()}).json()["available"] == 1_000
    now = book.api.get(url).json()
    assert (now["available"], now["alias"], now["assetCode"]) == (1_500, "@alice", "BRL")
    tomorrow = (timezone.now() + dt.timedelta(days=1)).date().isoformat()
    assert book.api.get(url, {"at": tomorrow}).json()["available"] == 1_500
    long_ago = book.api.get(url, {"at": "2000-01-01"}).json()
    assert (long_ago["available"], long_ago["onHold"]) == (0, 0)
    assert_error(book.api.get(url, {"at": "soon"}), 400, "0077")
