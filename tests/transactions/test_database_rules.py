"""The database refuses what the code must never do, even when the ORM is bypassed."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction

from organizations.models import Balance
from transactions.models import Operation


def _raw(sql: str, params: list) -> None:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params)


def test_it_refuses_a_negative_balance_outside_external_accounts(book, books_left_unbalanced):
    alice = Balance.objects.get(account__alias="@alice")
    with pytest.raises(IntegrityError):
        _raw(
            "UPDATE organizations_balance SET available = -1 WHERE id = %s",
            [alice.pk.hex if connection.vendor == "sqlite" else alice.pk],
        )
    external = Balance.objects.get(account__alias="@external/BRL")
    _raw(
        "UPDATE organizations_balance SET available = -1 WHERE id = %s",
        [external.pk.hex if connection.vendor == "sqlite" else external.pk],
    )
    assert Balance.objects.get(pk=external.pk).available == -1


def test_it_refuses_a_balance_below_minus_its_overdraft_limit(book, books_left_unbalanced):
    alice = Balance.objects.get(account__alias="@alice")
    pk = alice.pk.hex if connection.vendor == "sqlite" else alice.pk
    _raw("UPDATE organizations_balance SET overdraft_limit = '500' WHERE id = %s", [pk])
    _raw("UPDATE organizations_balance SET available = '-500' WHERE id = %s", [pk])
    with pytest.raises(IntegrityError):
        _raw("UPDATE organizations_balance SET available = '-501' WHERE id = %s", [pk])
    with pytest.raises(IntegrityError):
        _raw("UPDATE organizations_balance SET overdraft_limit = '499' WHERE id = %s", [pk])
    assert Balance.objects.get(pk=alice.pk).available == -500


def test_it_refuses_a_negative_hold(book):
    alice = Balance.objects.get(account__alias="@alice")
    with pytest.raises(IntegrityError):
        Balance.objects.filter(pk=alice.pk).update(on_hold=-1)


def test_it_refuses_bad_operations(book):
    book.fund("@alice", 10)
    op = Operation.objects.first()
    for change in ({"amount": 0}, {"type": "HOLD"}, {"effect": "MAGIC"}):
        with pytest.raises(IntegrityError), transaction.atomic():
            Operation.objects.create(**{**_fields(op), "balance_version": 99, **change})


def _fields(op: Operation) -> dict:
    data = {f.attname: getattr(op, f.attname) for f in Operation._meta.concrete_fields}
    data.pop("id")
    return data


@pytest.mark.postgres
@pytest.mark.skipif(connection.vendor != "postgresql", reason="the trigger is PostgreSQL's")
def test_it_refuses_update_and_delete_of_operations(book):
    book.fund("@alice", 10)
    op = Operation.objects.first()
    with pytest.raises(IntegrityError, match="append-only"):
        _raw("UPDATE transactions_operation SET amount = 1 WHERE id = %s", [op.pk])
    with pytest.raises(IntegrityError, match="append-only"):
        _raw("DELETE FROM transactions_operation WHERE id = %s", [op.pk])
    assert Operation.objects.get(pk=op.pk).amount == 10
