"""The database as the last line: every CHECK constraint of the money models, the positive-integer
columns and the uniqueness rules that keep money single, each proven by raw SQL that bypasses the
ORM and is refused by the database. Each refusal is matched to the rule's own name, and a
control statement shows that the same SQL with a valid value goes through, so a test cannot
pass because its statement was broken.

``tests/transactions/test_database_rules.py`` already proves ``balance_available_within_overdraft``
and the append-only trigger's UPDATE and DELETE by raw SQL; they are not repeated here.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import pytest
from django.apps import apps
from django.db import IntegrityError, connection, models, transaction

from instruments.models import Rate, RateValue
from organizations.models import Account, Balance, BalanceMonitor
from tests.organizations.helpers import instrument
from transactions.models import (
    Approval,
    ApprovalRule,
    IdempotencyKey,
    Operation,
    ScheduledPosting,
    Transaction,
)

ALREADY_PROVEN = {"balance_available_within_overdraft"}
POSITIVE_FIELDS = (
    models.PositiveSmallIntegerField,
    models.PositiveIntegerField,
    models.PositiveBigIntegerField,
)

# Effective times after and before any row's posting time.
LATER = dt.datetime(9000, 1, 1, tzinfo=dt.UTC)
EARLIER = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)
# constraint name -> (model, columns that break it, columns that satisfy it again)
VIOLATIONS: dict[str, tuple[type[models.Model], dict[str, Any], dict[str, Any]]] = {
    "balance_on_hold_not_negative": (Balance, {"on_hold": -1}, {"on_hold": 0}),
    "balance_overdraft_not_negative": (Balance, {"overdraft_limit": -1}, {"overdraft_limit": 0}),
    "balance_scale_range": (Balance, {"scale": 19}, {"scale": 18}),
    "transaction_status_valid": (Transaction, {"status": "LOST"}, {"status": "SENT"}),
    "transaction_amount_positive": (Transaction, {"amount": 0}, {"amount": 1}),
    "operation_amount_positive": (Operation, {"amount": 0}, {"amount": 1}),
    "operation_type_valid": (Operation, {"type": "HOLD"}, {"type": "CREDIT"}),
    "operation_effect_valid": (Operation, {"effect": "MAGIC"}, {"effect": "HOLD"}),
    "operation_type_with_effect": (Operation, {"effect": "RELEASE"}, {"effect": "SETTLE"}),
    "operation_scale_never_shrinks": (
        Operation,
        {"balance_scale": 4, "balance_scale_after": 2},
        {"balance_scale": 2, "balance_scale_after": 4},
    ),
    "transaction_effective_by_posting": (
        Transaction,
        {"effective_at": LATER},
        {"effective_at": EARLIER},
    ),
    "operation_effective_by_posting": (
        Operation,
        {"effective_at": LATER},
        {"effective_at": EARLIER},
    ),
    "rate_amount_positive": (Rate, {"amount": 0}, {"amount": 7}),
    "rate_scale_range": (Rate, {"scale": 19}, {"scale": 18}),
    "rate_codes_differ": (Rate, {"counter_code": "BRL"}, {"counter_code": "XAU"}),
    "monitor_measure_known": (BalanceMonitor, {"measure": "balance"}, {"measure": "onHold"}),
    "monitor_condition_known": (BalanceMonitor, {"condition": "under"}, {"condition": "above"}),
    "monitor_threshold_scale_range": (
        BalanceMonitor,
        {"threshold_scale": 19},
        {"threshold_scale": 18},
    ),
    "rate_value_amount_positive": (RateValue, {"amount": 0}, {"amount": 7}),
    "rate_value_scale_range": (RateValue, {"scale": 19}, {"scale": 18}),
    "account_status_known": (Account, {"status_code": "frozen"}, {"status_code": "FROZEN"}),
    "transaction_commits_before_expiry": (
        Transaction,
        {"commit_at": LATER, "expires_at": EARLIER},
        {"commit_at": EARLIER, "expires_at": LATER},
    ),
    "scheduled_status_valid": (ScheduledPosting, {"status": "LOST"}, {"status": "CANCELED"}),
    "scheduled_one_template": (ScheduledPosting, {"dsl": "(transaction-template v1)"}, {"dsl": ""}),
    "scheduled_posted_names_transaction": (
        ScheduledPosting,
        {"status": "POSTED"},
        {"status": "SCHEDULED"},
    ),
    "scheduled_failed_says_why": (ScheduledPosting, {"status": "FAILED"}, {"status": "SCHEDULED"}),
    "approval_rule_action_known": (ApprovalRule, {"action": "freeze"}, {"action": "revert"}),
    "approval_status_known": (Approval, {"status": "OPEN"}, {"status": "REJECTED"}),
    "approval_action_known": (Approval, {"action": "freeze"}, {"action": "revert"}),
    "approval_checker_not_maker": (Approval, {"checker_id": "7"}, {"checker_id": "8"}),
}


def _project_check_constraints() -> dict[str, type[models.Model]]:
    found = {}
    for model in apps.get_models():
        if model._meta.app_label not in {
            "organizations",
            "instruments",
            "templates_dsl",
            "transactions",
        }:
            continue
        for constraint in model._meta.constraints:
            if isinstance(constraint, models.CheckConstraint):
                found[constraint.name] = model
    return found


def test_every_check_constraint_has_a_raw_sql_proof():
    assert set(_project_check_constraints()) == set(VIOLATIONS) | ALREADY_PROVEN


def _prep(model: type[models.Model], column: str, value: Any) -> Any:
    field = next(f for f in model._meta.concrete_fields if f.column == column)
    return field.get_db_prep_value(value, connection)


def _quote(name: str) -> str:
    return connection.ops.quote_name(name)


def _raw(sql: str, params: list[Any]) -> None:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params)


def raw_update(model: type[models.Model], pk: Any, values: dict[str, Any]) -> None:
    columns = ", ".join(f"{_quote(model._meta.get_field(k).column)} = %s" for k in values)
    params = [_prep(model, model._meta.get_field(k).column, v) for k, v in values.items()]
    pk_column = model._meta.pk.column
    _raw(
        f"UPDATE {_quote(model._meta.db_table)} SET {columns} WHERE {_quote(pk_column)} = %s",
        [*params, _prep(model, pk_column, pk)],
    )


def raw_clone(model: type[models.Model], pk: Any, values: dict[str, Any]) -> None:
    """INSERT ... SELECT a copy of a row with a new id and ``values`` changed: how an
    append-only table (where UPDATE is refused by a trigger) is tested."""
    auto = isinstance(model._meta.pk, models.AutoField)
    values = values if auto else {"id": uuid.uuid4(), **values}
    columns, select, params = [], [], []
    for field in model._meta.concrete_fields:
        if auto and field.primary_key:
            continue
        columns.append(_quote(field.column))
        if field.attname in values:
            select.append("%s")
            params.append(field.get_db_prep_value(values[field.attname], connection))
        else:
            select.append(_quote(field.column))
    table = _quote(model._meta.db_table)
    _raw(
        f"INSERT INTO {table} ({', '.join(columns)}) SELECT {', '.join(select)} FROM {table} "
        f"WHERE {_quote(model._meta.pk.column)} = %s",
        [*params, _prep(model, model._meta.pk.column, pk)],
    )


def _write(model: type[models.Model], pk: Any, values: dict[str, Any], serial: list[int]) -> None:
    if model is Operation:
        serial[0] += 1
        raw_clone(model, pk, {"balance_version": 10**9 + serial[0], **values})
    else:
        raw_update(model, pk, values)


@pytest.fixture
def rows(book, books_left_unbalanced) -> dict[type[models.Model], Any]:
    book.fund("@alice", 10_000)
    book.pay(1_000, 10)
    instrument(book.api, book.url, "XAU", type="commodity")
    rate = book.api.post(
        f"{book.url}/asset-rates",
        {"baseAssetCode": "BRL", "counterAssetCode": "XAU", "amount": 5, "scale": 2},
    )
    assert rate.status_code == 201, rate.content
    monitor = book.api.post(
        f"{book.url}/balance-monitors",
        {
            "accountId": book.accounts["@bob"]["id"],
            "measure": "available",
            "condition": "below",
            "threshold": {"amount": 1, "scale": 0},
        },
    )
    assert monitor.status_code == 201, monitor.content
    later = book.post(
        {
            "transactionTypeCode": "FUND",
            "variables": {"amount": 5, "account": "@alice"},
            "scheduledFor": "2099-01-01T00:00:00Z",
        }
    )
    assert later.status_code == 202, later.content
    ledger = Transaction.objects.latest("created_at").ledger
    scope = {"organization_id": ledger.organization_id, "ledger": ledger}
    rule = ApprovalRule.objects.create(**scope, action="post")
    approval = Approval.objects.create(**scope, action="post", summary="s", maker_id="7",
                                       maker_name="maker", maker_reason="r")  # fmt: skip
    return {
        ApprovalRule: rule.pk,
        Approval: approval.pk,
        ScheduledPosting: uuid.UUID(later.json()["id"]),
        Balance: Balance.objects.get(account__alias="@alice").pk,
        Transaction: Transaction.objects.latest("created_at").pk,
        Operation: Operation.objects.filter(type="DEBIT").latest("created_at").pk,
        Rate: uuid.UUID(rate.json()["id"]),
        RateValue: RateValue.objects.get(rate_id=rate.json()["id"]).pk,
        BalanceMonitor: uuid.UUID(monitor.json()["id"]),
        Account: Account.objects.get(alias="@bob").pk,
    }


@pytest.mark.parametrize("name", sorted(VIOLATIONS))
def test_the_database_refuses_each_check_violation(rows, name):
    model, bad, good = VIOLATIONS[name]
    serial = [0]
    with pytest.raises(IntegrityError, match=name):
        _write(model, rows[model], bad, serial)
    _write(model, rows[model], good, serial)


def _positive_columns() -> list[tuple[type[models.Model], str]]:
    return [
        (model, field.attname)
        for model in (Balance, Transaction, Operation, Rate, RateValue, BalanceMonitor)
        for field in model._meta.concrete_fields
        if isinstance(field, POSITIVE_FIELDS)
    ]


@pytest.mark.parametrize(
    ("model", "column"), _positive_columns(), ids=lambda v: getattr(v, "__name__", v)
)
def test_the_database_refuses_negative_scales(rows, model, column):
    serial = [0]
    with pytest.raises(IntegrityError):
        _write(model, rows[model], {column: -1}, serial)
    _write(model, rows[model], {column: 0 if column != "balance_scale_after" else 2}, serial)


def test_the_database_keeps_one_operation_per_account_version(rows):
    op = Operation.objects.get(pk=rows[Operation])
    with pytest.raises(IntegrityError):
        raw_clone(Operation, op.pk, {})
    raw_clone(Operation, op.pk, {"balance_version": op.balance_version + 1000})


def test_the_database_keeps_one_reversal_per_transaction(book):
    book.fund("@alice", 10_000)
    paid = book.pay(1_000, 10).json()
    reverted = book.api.post(f"{book.url}/transactions/{paid['id']}/revert")
    assert reverted.status_code == 201, reverted.content
    other = Transaction.objects.filter(type="FUND").get()
    with pytest.raises(IntegrityError):
        raw_update(Transaction, other.pk, {"is_reversal": True, "parent": paid["id"]})
    raw_update(Transaction, other.pk, {"is_reversal": False, "parent": paid["id"]})


def test_the_database_keeps_one_idempotency_record_per_key(book):
    book.fund("@alice", 100)
    body = {"transactionTypeCode": "FUND", "variables": {"amount": 1, "account": "@bob"}}
    response = book.post(body, HTTP_IDEMPOTENCY_KEY="k-1")
    assert response.status_code == 201, response.content
    record = IdempotencyKey.objects.get(key="k-1")
    with pytest.raises(IntegrityError):
        raw_clone(IdempotencyKey, record.pk, {})
    raw_clone(IdempotencyKey, record.pk, {"key": "k-2"})


@pytest.mark.postgres
@pytest.mark.skipif(connection.vendor != "postgresql", reason="the trigger is PostgreSQL's")
def test_the_trigger_refuses_even_an_update_that_changes_nothing(rows):
    pk = _prep(Operation, "id", rows[Operation])
    with pytest.raises(IntegrityError, match="append-only"):
        _raw("UPDATE transactions_operation SET amount = amount WHERE id = %s", [pk])
    with pytest.raises(IntegrityError, match="append-only"):
        _raw("UPDATE transactions_operation SET description = 'x'", [])
    raw_clone(Operation, rows[Operation], {"balance_version": 10**9})
