"""The guard of the posting's one write (``writes.write_posting``): nothing is written unless
the ledger is active, every asset is an active instrument of it and no touched account is
deleted. On PostgreSQL the function checks it in one of two forms, by the posting's shape: the
usual one (one asset, at most two accounts, named one by one so that its plan is kept) and any
other (the same check over the arrays). Each case runs in both shapes, the deleted account in
every position, so neither form can miss what the other sees."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection
from django.db import transaction as db_transaction
from django.utils import timezone

from instruments.models import Instrument
from organizations.models import Account, Balance, Ledger
from transactions.guards import Guard
from transactions.models import Transaction
from transactions.writes import write_posting

ALIASES = ("@alice", "@bob", "@fees/platform")


@pytest.fixture
def ledger(book):
    book.api.post(f"{book.url}/instruments", {"name": "Dollar", "type": "currency", "code": "USD"})
    return Ledger.objects.get(pk=book.url.rsplit("/", 1)[1])


def _ids(ledger: Ledger) -> list:
    by_alias = dict(Account.objects.filter(ledger=ledger).values_list("alias", "id"))
    return [by_alias[alias] for alias in ALIASES]


def _holds(ledger: Ledger, assets: list[str], accounts: list) -> bool:
    written = write_posting([], [], [], guard=Guard.of(ledger, assets, accounts))
    assert Transaction.objects.filter(ledger=ledger).count() == 0
    return written


SHAPES = {
    "one asset, one account": (["BRL"], 1),
    "one asset, two accounts": (["BRL"], 2),
    "one asset, three accounts": (["BRL"], 3),
    "two assets, two accounts": (["BRL", "USD"], 2),
}


@pytest.mark.parametrize("shape", SHAPES)
def test_it_holds_when_everything_is_active(ledger, shape):
    assets, count = SHAPES[shape]
    assert _holds(ledger, assets, _ids(ledger)[:count]) is True


@pytest.mark.parametrize("shape", SHAPES)
def test_a_deleted_account_in_any_position_stops_the_write(ledger, shape):
    assets, count = SHAPES[shape]
    accounts = _ids(ledger)[:count]
    for position in range(count):
        Account.objects.filter(pk=accounts[position]).update(deleted_at=timezone.now())
        assert _holds(ledger, assets, accounts) is False, position
        Account.objects.filter(pk=accounts[position]).update(deleted_at=None)
    assert _holds(ledger, assets, accounts) is True


@pytest.mark.parametrize("shape", SHAPES)
def test_a_deleted_instrument_stops_the_write(ledger, shape):
    assets, count = SHAPES[shape]
    for asset in assets:
        Instrument.objects.filter(ledger=ledger, code=asset).update(deleted_at=timezone.now())
        assert _holds(ledger, assets, _ids(ledger)[:count]) is False, asset
        Instrument.objects.filter(ledger=ledger, code=asset).update(deleted_at=None)


@pytest.mark.parametrize("shape", SHAPES)
def test_an_unknown_asset_stops_the_write(ledger, shape):
    assets, count = SHAPES[shape]
    assert _holds(ledger, [*assets[:-1], "XYZ"], _ids(ledger)[:count]) is False


@pytest.mark.parametrize("shape", SHAPES)
def test_a_deleted_ledger_stops_the_write(ledger, shape):
    assets, count = SHAPES[shape]
    Ledger.objects.filter(pk=ledger.pk).update(deleted_at=timezone.now())
    assert _holds(ledger, assets, _ids(ledger)[:count]) is False


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the write function is PostgreSQL's")
def test_a_balance_of_an_account_the_guard_does_not_name_is_refused_not_skipped(ledger):
    # The write updates only the balances of the accounts its guard names: a balance
    # row of another account would match nothing, so the function raises instead of writing
    # the posting without it.
    alice, bob, fees = _ids(ledger)
    balance = Balance.objects.get(account_id=fees)
    with pytest.raises(DatabaseError, match="0 of 1 balances updated"), db_transaction.atomic():
        write_posting([], [], [balance], guard=Guard.of(ledger, ["BRL"], [alice, bob]))
    assert write_posting([], [], [balance], guard=Guard.of(ledger, ["BRL"], [fees])) is True
