"""Amounts keep the scale they were given; a balance, and its overdraft limit, are at the
balance's scale (the largest that reached it, never lowered); a balance figure is at the scale
the balance had at that moment (docs/API.md, Amounts and scales).

Before: an overdraft limit sent as 2500 at scale 2 came back as 25 at scale 0, and a balance at
a point in time before any operation was answered at scale 0 whatever the balance's scale."""

from __future__ import annotations

import pytest

from tests.conftest import Api
from tests.transactions.conftest import Book, make_book


@pytest.fixture
def book(api: Api, ledger_url: str) -> Book:
    return make_book(api, ledger_url)


def _balance_at(book: Book, alias: str, **query: str) -> dict[str, int]:
    url = f"{book.url}/accounts/{book.accounts[alias]['id']}/balance"
    response = book.api.get(url, query)
    assert response.status_code == 200, response.content
    body = response.json()
    return {key: body[key] for key in ("available", "onHold", "scale")}


def test_an_overdraft_limit_keeps_the_scale_it_was_given(book):
    carol = book.account("@carol", overdraftLimit={"amount": 2500, "scale": 2})
    assert carol["overdraftLimit"] == {"amount": 2500, "scale": 2}
    assert carol["balance"] == {"available": 0, "onHold": 0, "scale": 2}
    url = f"{book.url}/accounts/{carol['id']}"
    assert book.api.get(url).json()["overdraftLimit"] == {"amount": 2500, "scale": 2}
    # A limit at a smaller scale is written at the balance's: the same value, one format.
    patched = book.api.patch(url, {"overdraftLimit": {"amount": 10, "scale": 0}}).json()
    assert patched["overdraftLimit"] == {"amount": 1000, "scale": 2}
    patched = book.api.patch(url, {"overdraftLimit": {"amount": 12340, "scale": 3}}).json()
    assert patched["overdraftLimit"] == {"amount": 12340, "scale": 3}
    assert patched["balance"] == {"available": 0, "onHold": 0, "scale": 3}


def test_a_balance_at_a_point_in_time_has_the_scale_it_had_then(book):
    book.account("@carol", overdraftLimit={"amount": 2500, "scale": 2})
    now = book.balance("@carol")
    assert _balance_at(book, "@carol") == now == {"available": 0, "onHold": 0, "scale": 2}
    book.fund("@carol", 700)
    assert _balance_at(book, "@carol") == {"available": 700, "onHold": 0, "scale": 2}
    # Before its first operation the balance was zero, at the scale that operation found.
    assert _balance_at(book, "@carol", at="2000-01-01") == {"available": 0, "onHold": 0, "scale": 2}
    assert _balance_at(book, "@bob", at="2000-01-01") == {"available": 0, "onHold": 0, "scale": 0}


def test_a_balance_back_at_zero_keeps_its_scale(book):
    book.fund("@bob", 300)
    book.pay(300, 0, source="@bob", destination="@alice")
    assert book.balance("@bob") == {"available": 0, "onHold": 0, "scale": 2}


def test_an_overdraft_limit_is_sent_whole(book):
    """Both its fields, on create and in a PATCH alike: a missing one is 400 0009, named."""
    carol = book.account("@carol", overdraftLimit={"amount": 2500, "scale": 2})
    url = f"{book.url}/accounts/{carol['id']}"
    for body in ({"amount": 5}, {}):
        for answer in (
            book.api.patch(url, {"overdraftLimit": body}),
            book.api.post(f"{book.url}/accounts", {"assetCode": "BRL", "overdraftLimit": body}),
        ):
            assert answer.status_code == 400, answer.content
            assert answer.json()["code"] == "0009"
            assert "overdraftLimit.scale" in answer.json()["fields"]
    assert book.api.get(url).json()["overdraftLimit"] == {"amount": 2500, "scale": 2}
