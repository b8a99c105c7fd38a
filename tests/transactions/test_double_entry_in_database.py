"""Double entry held by the database itself (transactions/sql/double_entry*.sql): rows written
with plain SQL, past the service, that break a rule of the books are refused. Each attack is
a database transaction of its own (the tests commit for real): PostgreSQL, and a Citus
cluster's workers, refuse it when it commits; SQLite refuses, as each row is written, what a
row trigger can know then (docs/BOOKS.md)."""

from __future__ import annotations

import contextlib
import json
import re
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import IntegrityError, InternalError, connection, transaction

from organizations.models import Balance
from tests.conftest import CITUS
from transactions.models import Operation


def postgresql_only(test: Any) -> Any:
    skip = pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="checked at commit: deferred constraint triggers are PostgreSQL's (SQLite has none)",
    )
    return pytest.mark.postgres(skip(test))


# Each test commits for real: the checks run when a transaction commits.
committing = pytest.mark.django_db(transaction=True)

COLUMNS = [f.column for f in Operation._meta.concrete_fields]


@contextlib.contextmanager
def refused(reason: str) -> Iterator[None]:
    """The commit is refused, for this reason, and writes nothing. Through Citus, a worker's
    refusal of its part of a commit that spans connections reaches the coordinator as "could not
    commit transaction for shard ..." (the reason is in the worker's log)."""
    before = Operation.objects.count(), list(Balance.objects.order_by("pk").values())
    with pytest.raises((IntegrityError, InternalError)) as caught:
        yield
    message = str(caught.value)
    assert re.search(reason, message) or (
        CITUS and "could not commit transaction for shard" in message
    ), message
    assert (Operation.objects.count(), list(Balance.objects.order_by("pk").values())) == before


def _attack(*statements: tuple[str, list[Any]]) -> None:
    """The statements in one database transaction, which commits."""
    with transaction.atomic(), connection.cursor() as cursor:
        for sql, params in statements:
            cursor.execute(sql, params)


def _copy_of(op: Operation, **changes: Any) -> tuple[str, list[Any]]:
    """An INSERT of a copy of the operation under a new id, with these columns changed."""
    values = {f.column: getattr(op, f.attname) for f in Operation._meta.concrete_fields}
    values.update(id=uuid.uuid4(), **changes)
    values = {c: _db(v) for c, v in values.items()}
    if isinstance(values["metadata"], dict):
        values["metadata"] = json.dumps(values["metadata"])
    names = ", ".join(COLUMNS)
    marks = ", ".join(["%s"] * len(COLUMNS))
    return f"INSERT INTO transactions_operation ({names}) VALUES ({marks})", [
        values[c] for c in COLUMNS
    ]


def _db(value: Any) -> Any:
    """A value as the raw statement sends it: SQLite stores ids as 32 hex digits and amounts
    as text."""
    if connection.vendor != "sqlite":
        return value
    if isinstance(value, uuid.UUID):
        return value.hex
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value


def _next_of(op: Operation, **changes: Any) -> tuple[str, list[Any]]:
    """An INSERT of a copy of the operation as the next one of its account: starting where it
    ended, with these columns changed."""
    start = {
        "balance_version": op.balance_version + 1,
        "balance_available": op.balance_available_after,
        "balance_on_hold": op.balance_on_hold_after,
        "balance_scale": op.balance_scale_after,
    }
    return _copy_of(op, **{**start, **changes})


def _last_operation(alias: str) -> Operation:
    return Operation.objects.filter(account_alias=alias).order_by("-balance_version").first()


@committing
def test_the_triggers_are_in_place():
    """Made by the migration, and kept by every later change to the tables (SQLite makes a
    table again for most changes: ``tenancy.triggers_set_aside``)."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal")
        else:
            cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        names = {row[0] for row in cursor.fetchall()}
    expected = (
        {"operation_double_entry", "balance_double_entry", "balance_kept"}
        if connection.vendor == "postgresql"
        else {
            "operation_double_entry",
            "operation_changes_by_its_amount",
            "balance_double_entry",
            "balance_double_entry_insert",
        }
    )
    assert expected <= names


@committing
def test_postings_through_the_service_commit(book):
    book.fund("@alice", 10_000)
    assert book.pay(2_500, 100).status_code == 201
    assert book.pay(100, 0, pending=True).status_code == 201
    assert Balance.objects.get(account__alias="@alice").version == 3


@committing
def test_an_extra_copy_of_an_operation_is_refused(book):
    book.fund("@alice", 10_000)
    op = _last_operation("@alice")
    copy = _copy_of(op, balance_version=op.balance_version + 1)
    with refused("double entry"):
        _attack(copy)


@postgresql_only
@committing
def test_an_extra_copy_with_its_balance_moved_too_is_refused(book):
    """The copy starts where the account's last operation ended and the balance shows it: its
    own statement holds, but its transaction's debits no longer equal its credits."""
    book.fund("@alice", 10_000)
    op = _last_operation("@alice")
    moved = op.balance_available_after + op.amount  # a CREDIT POST of the same amount again
    copy = _next_of(op, balance_available_after=moved)
    balance = (
        "UPDATE organizations_balance SET available = %s, version = version + 1 "
        "WHERE account_id = %s",
        [_db(moved), _db(op.account_id)],
    )
    assert op.type == "CREDIT" and op.effect == "POST"
    with refused("do not equal its credits"):
        _attack(copy, balance)


@committing
def test_an_operation_whose_change_is_not_its_amount_is_refused(book):
    book.fund("@alice", 10_000)
    op = _last_operation("@alice")
    copy = _next_of(op, balance_available_after=op.balance_available_after + op.amount + 1)
    with refused("by its amount"):
        _attack(copy)


@committing
def test_an_operation_that_does_not_start_where_the_last_ended_is_refused(book):
    book.fund("@alice", 10_000)
    op = _last_operation("@alice")
    copy = _next_of(
        op,
        balance_available=op.balance_available_after + 7,
        balance_available_after=op.balance_available_after + 7 + op.amount,
    )
    with refused("does not start where"):
        _attack(copy)


@pytest.mark.parametrize(
    "change",
    [
        "available = available + 1",
        "on_hold = on_hold + 1",
        "version = version + 1",
        "version = version - 1",
    ],
)
@committing
def test_a_balance_changed_without_its_operation_is_refused(book, change):
    book.fund("@alice", 10_000)
    book.pay(2_500, 100)
    alice = Balance.objects.get(account__alias="@alice")
    with refused("double entry"):
        _attack((f"UPDATE organizations_balance SET {change} WHERE id = %s", [_db(alice.pk)]))


@committing
def test_a_balance_raised_to_a_larger_scale_at_equal_value_is_kept(book):
    """An overdraft limit sent at a larger scale rescales the balance, exactly, between two
    operations (docs/BALANCE-CONTROLS.md): the same value, so the same statement."""
    book.fund("@alice", 10_000)
    alice = Balance.objects.get(account__alias="@alice")
    _attack(
        (
            "UPDATE organizations_balance SET available = available * 100, "
            "on_hold = on_hold * 100, scale = scale + 2 WHERE id = %s",
            [_db(alice.pk)],
        )
    )


@postgresql_only
@committing
def test_a_balance_with_operations_is_not_deleted(book):
    book.fund("@alice", 10_000)
    alice = Balance.objects.get(account__alias="@alice")
    with refused("is kept"):
        _attack(("DELETE FROM organizations_balance WHERE id = %s", [_db(alice.pk)]))


@committing
def test_a_refused_commit_writes_nothing(book):
    book.fund("@alice", 10_000)
    alice = Balance.objects.get(account__alias="@alice")
    with refused("double entry"):
        _attack(
            ("UPDATE organizations_balance SET on_hold = 0 WHERE id = %s", [_db(alice.pk)]),
            (
                "UPDATE organizations_balance SET available = available + 1 WHERE id = %s",
                [_db(alice.pk)],
            ),
        )
    assert Balance.objects.get(pk=alice.pk).available == alice.available


def _other_ledger(book: Any) -> uuid.UUID:
    organization = book.url.split("/organizations/")[1].split("/")[0]
    made = book.api.post(f"/v1/organizations/{organization}/ledgers", {"name": "other"})
    assert made.status_code == 201, made.content
    return uuid.UUID(made.json()["id"])


@postgresql_only
@committing
@pytest.mark.parametrize("where", ["asset", "ledger"])
def test_operations_outside_their_accounts_asset_or_ledger_are_refused(book, where):
    """A credit to @alice and a debit from @bob of 5 in their payment's transaction, each the
    next operation of its account, their balances moved to match: every sum holds, in an asset
    (or a ledger) neither account is in."""
    book.fund("@alice", 10_000)
    book.pay(2_500, 100)
    change = {"asset_code": "XAU"} if where == "asset" else {"ledger_id": _other_ledger(book)}
    statements = []
    for alias, kind, sign in (("@alice", "CREDIT", 1), ("@bob", "DEBIT", -1)):
        op = _last_operation(alias)
        after = op.balance_available_after + sign * 5
        statements.append(
            _next_of(
                op,
                type=kind,
                effect="POST",
                amount=5,
                scale=op.balance_scale_after,
                balance_available_after=after,
                **change,
            )
        )
        statements.append(
            (
                "UPDATE organizations_balance SET available = %s, version = version + 1 "
                "WHERE account_id = %s",
                [_db(after), _db(op.account_id)],
            )
        )
    assert _last_operation("@alice").transaction_id == _last_operation("@bob").transaction_id
    with refused("not in the asset and ledger"):
        _attack(*statements)


@committing
def test_an_operation_at_a_smaller_scale_is_read_at_its_balances(book):
    """An amount of 1 at scale 0 is 100 at the balance's scale 2: a balance moved by 1 is not
    moved by the amount (SQLite writes the amount at the larger scale before it compares)."""
    book.fund("@alice", 10_000)
    op = _last_operation("@alice")
    assert op.balance_scale_after == 2
    copy = _next_of(op, amount=1, scale=0, balance_available_after=op.balance_available_after + 1)
    with refused("by its amount"):
        _attack(copy)


@postgresql_only
@committing
def test_a_balance_made_in_another_asset_than_its_account_is_refused(book):
    carol = book.account("@carol")
    balance = Balance.objects.get(account_id=carol["id"])
    with refused("not in its account's asset and ledger"):
        _attack(
            ("DELETE FROM organizations_balance WHERE id = %s", [_db(balance.pk)]),
            (
                "INSERT INTO organizations_balance (id, organization_id, ledger_id, account_id, "
                "asset_code, is_external, available, on_hold, scale, overdraft_limit, version, "
                "updated_at) SELECT %s, organization_id, ledger_id, id, 'XAU', false, 0, 0, 0, "
                "0, 0, updated_at FROM organizations_account WHERE id = %s",
                [_db(uuid.uuid4()), _db(carol["id"])],
            ),
        )


@postgresql_only
@committing
def test_a_balance_moved_to_another_account_is_refused(book):
    book.fund("@alice", 10_000)
    alice = Balance.objects.get(account__alias="@alice")
    carol = book.account("@carol")
    with refused("keeps its account"):
        _attack(
            ("DELETE FROM organizations_balance WHERE account_id = %s", [_db(carol["id"])]),
            (
                "UPDATE organizations_balance SET account_id = %s WHERE id = %s",
                [_db(carol["id"]), _db(alice.pk)],
            ),
        )
