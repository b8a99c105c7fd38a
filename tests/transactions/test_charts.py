"""Charts (docs/TRANSACTIONS.md, Charts)."""

from __future__ import annotations

from django.utils import timezone

from tests.conftest import Api, assert_error, make_token


def _chart(book, body, **params):
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return book.api.post(f"{book.url}/charts{'?' + query if query else ''}", body)


def test_it_counts_transactions(book):
    book.fund("@alice", 1_000)
    book.pay(10, 1)
    book.pay(10, 1, pending=True)
    today = timezone.now().date().isoformat()
    body = {"type": "totalTransactions", "startDate": today, "endDate": today}
    result = _chart(book, body).json()
    assert result == {
        "type": "totalTransactions",
        "startDate": today,
        "endDate": today,
        "data": [{"metric": "totalTransactions", "count": 2}],
    }
    by_status = _chart(book, {**body, "type": "transactionsByStatus"}).json()["data"]
    assert by_status == [
        {"metric": "CREATED", "count": 0},
        {"metric": "PRE_APPROVED", "count": 1},
        {"metric": "SENT", "count": 2},
        {"metric": "CANCELED", "count": 0},
    ]
    empty = _chart(book, {**body, "startDate": "2000-01-01", "endDate": "2000-01-02"}).json()
    assert empty["data"] == [{"metric": "totalTransactions", "count": 0}]


def test_it_sums_amounts_by_asset(book):
    book.api.post(f"{book.url}/instruments", {"name": "Dollar", "type": "currency", "code": "USD"})
    book.fund("@alice", 1_000)
    book.pay(100, 5)
    result = _chart(book, {"type": "totalAmountByAsset"}).json()
    assert result["startDate"] is None and result["endDate"] is None
    assert result["data"] == [{"metric": "BRL", "count": 1_000, "scale": 2}]
    book.pay(10, 0, pending=True)
    data = _chart(book, {"type": "totalAmountByInstrument"}, limit=1).json()["data"]
    assert data == [{"metric": "BRL", "count": 1_000, "scale": 2}]


def test_it_refuses_bad_chart_requests(book):
    assert_error(_chart(book, {"type": "nope"}), 400, "0031")
    assert_error(_chart(book, {}), 400, "0009")
    assert_error(_chart(book, {"type": "totalTransactions"}), 400, "0009")
    body = {"type": "totalTransactions", "startDate": "2024-02-02", "endDate": "2024-02-01"}
    assert_error(_chart(book, body), 400, "0083")
    assert_error(_chart(book, {**body, "startDate": "02/02/2024"}), 400, "0077")
    assert_error(_chart(book, {"type": "totalAmountByAsset"}, limit=0), 400, "0082")
    assert_error(_chart(book, {"type": "totalAmountByAsset"}, limit=101), 400, "0082")


def test_it_lets_a_read_only_token_draw_charts(book):
    reader = Api(make_token("reader", read_only=True))
    response = reader.post(f"{book.url}/charts", {"type": "totalAmountByAsset"})
    assert response.status_code == 200
    assert_error(
        reader.post(f"{book.url}/transactions", {"transactionTypeCode": "FUND"}), 403, "0043"
    )
