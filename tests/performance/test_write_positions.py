"""The posting's rows travel as arrays of values read by position (the current text of
``ledger_write_posting`` in transactions/sql/): the service sends each table's values in the
order the function reads them, and what is stored is what was posted, a JSON null in a
``jsonb`` column included."""

from __future__ import annotations

import re

import pytest
from django.db import connection

from ledgerproject.migration_ops import current_sql
from organizations.models import Balance
from outbox.events import EVENT_COLUMNS
from outbox.models import Event
from transactions import writes
from transactions.models import Operation, Transaction

CURRENT = current_sql("transactions", "ledger_write_posting")


def _names(table: str) -> tuple[str, ...]:
    """The columns the function inserts into ``table``, in the order of its column list, after
    checking that the n-th value it selects is read from position n of the row and named as
    the n-th column."""
    found = re.search(
        rf"INSERT INTO {table} \(([^)]*)\)\n    SELECT (.*?)\n    FROM", CURRENT, re.S
    )
    assert found, table
    names = tuple(name.strip() for name in found.group(1).split(","))
    values = [value.strip() for value in found.group(2).split(",\n")]
    for index, (name, value) in enumerate(zip(names, values, strict=True)):
        assert re.fullmatch(
            rf"(\(r->>{index}\)::\w+|NULLIF\(r->{index}, 'null'\)"
            rf"|COALESCE\(r->>{index}, '[^']*'\)::\w+"
            # A value a process on an earlier version does not send: another of the row's.
            rf"|COALESCE\(r->>{index}, r->>\d+\)::\w+) AS {name}",
            value,
        ), value
    return names


def test_the_service_sends_each_table_s_values_in_the_function_s_order():
    assert _names("transactions_transaction") == writes.TRANSACTION_COLUMNS
    assert _names("transactions_operation") == writes.OPERATION_COLUMNS
    assert _names("outbox_event") == EVENT_COLUMNS


@pytest.mark.parametrize(
    ("model", "table"),
    [
        (Transaction, "transactions_transaction"),
        (Operation, "transactions_operation"),
        (Event, "outbox_event"),
    ],
)
def test_the_function_writes_every_column_of_the_table(model, table):
    """A column the table has and the function does not write would take its default
    silently; the migration's list is the table's, less what the database fills itself."""
    filled_by_the_database = {"seq", "xid", "published_at", "dispatched_at", "attempts"}
    columns = {f.column for f in model._meta.concrete_fields}
    columns -= filled_by_the_database
    assert set(_names(table)) == columns


@pytest.mark.postgres
@pytest.mark.django_db
@pytest.mark.skipif(connection.vendor != "postgresql", reason="the function is PostgreSQL's")
def test_what_is_stored_is_what_was_posted(book):
    book.fund("@alice", 1_000_000)
    variables = {"amount": 2_500, "fee": 100, "source": "@alice", "destination": "@bob"}
    response = book.post(
        {"transactionTypeCode": "PAYMENT_WITH_FEE", "variables": variables, "pending": True}
    )
    assert response.status_code == 201, response.content
    posted = response.json()
    tx = Transaction.objects.get(pk=posted["id"])
    assert tx.status == Transaction.PRE_APPROVED
    assert tx.parent_id is None and tx.expires_at is None  # JSON null: SQL NULL
    assert tx.amount == posted["amount"]["amount"] == 2_600 and tx.source == ["@alice"]
    operations = list(Operation.objects.filter(transaction_id=tx.pk).order_by("created_at", "id"))
    assert [str(op.id) for op in operations] == [op["id"] for op in posted["operations"]]
    for stored, answered in zip(operations, posted["operations"], strict=True):
        after = answered["balanceAfter"]
        assert stored.balance_available_after == after["available"]
        assert stored.balance_on_hold_after == after["onHold"]
        assert stored.account_alias == answered["accountAlias"]
        balance = Balance.objects.get(account_id=stored.account_id)  # the new balances too
        assert (balance.available, balance.on_hold) == (after["available"], after["onHold"])
    event = Event.objects.get(resource_id=tx.pk, type="transaction.posted")
    assert event.data == posted
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM transactions_transaction WHERE id = %s "
            "AND parent_id IS NULL AND expires_at IS NULL AND metadata IS NOT NULL",
            [tx.pk],
        )
        assert cursor.fetchone()[0] == 1
