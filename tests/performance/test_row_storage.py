"""A posting's event, and the answer a key records, are stored as they are, not compressed
(``toast_tuple_target``: outbox 0002, transactions 0011). Each is about 2 KB, just past the
size where PostgreSQL compresses a row's large values by default, which every posting paid
for in CPU. ``pg_column_compression`` is null for a value stored uncompressed."""

from __future__ import annotations

import pytest
from django.db import connection

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.django_db,
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="how PostgreSQL stores a row's large values"
    ),
]


def _one(sql: str, params: list[object]) -> tuple[object, ...]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    assert row is not None
    return tuple(row)


@pytest.mark.parametrize("table", ["outbox_event", "transactions_idempotencykey"])
def test_the_table_keeps_rows_whole_up_to_a_page(table: str) -> None:
    (options,) = _one("SELECT reloptions FROM pg_class WHERE relname = %s", [table])
    assert "toast_tuple_target=8160" in (options or [])


def test_a_posting_s_event_and_its_key_s_answer_are_not_compressed(book) -> None:
    book.fund("@alice", 1_000_000)
    variables = {"amount": 2_500, "fee": 100, "source": "@alice", "destination": "@bob"}
    body = {"transactionTypeCode": "PAYMENT_WITH_FEE", "variables": variables}
    response = book.post(body, HTTP_IDEMPOTENCY_KEY="stored-whole")
    assert response.status_code == 201, response.content
    tx_id = response.json()["id"]
    size, method = _one(
        "SELECT octet_length(data::text), pg_column_compression(data) FROM outbox_event "
        "WHERE resource_id = %s AND type = 'transaction.posted'",
        [tx_id],
    )
    assert size > 1_500  # large enough that it used to be compressed
    assert method is None
    size, method = _one(
        "SELECT octet_length(response_body::text), pg_column_compression(response_body) "
        "FROM transactions_idempotencykey WHERE key = %s",
        ["stored-whole"],
    )
    assert size > 1_500
    assert method is None
