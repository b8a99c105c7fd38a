"""A small book for posting tests: BRL with @alice, @bob, @fees/platform, a funding template
and the specification's payment-with-fee template."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import pytest
from django.db import connection

from tests.conftest import Api

FUND = """
(transaction-template v1
  (chart-of-accounts-group-name FUNDING)
  (code FUND)
  (description "Deposit")
  (send BRL $amount|2
    (source (from @external/BRL :amount BRL $amount|2 (chart-of-accounts CASH_IN))))
  (distribute
    (to $account :amount BRL $amount|2 (description "Deposit to $account")
      (chart-of-accounts DEPOSITS))))
"""

PAYMENT = """
(transaction-template v1
  (chart-of-accounts-group-name PAG_CONTAS_CODE_1)
  (metadata (channel app) (origin template))
  (code PAYMENT_WITH_FEE)
  (description "Payment with fee")
  (send BRL $amount+$fee|2
    (source
      (from $source :amount BRL $amount+$fee|2
        (description "Pay $amount plus fee $fee")
        (chart-of-accounts PAYMENT_DEBIT))))
  (distribute
    (to @fees/platform :amount BRL $fee|2
      (description "Fee")
      (chart-of-accounts FEE_CREDIT))
    (distribute :remaining
      (to $destination :remaining
        (chart-of-accounts PAYMENT_CREDIT)))))
"""

HOLD = PAYMENT.replace("PAYMENT_WITH_FEE", "PAYMENT_HELD").replace(
    '(description "Payment with fee")', '(description "Held payment")\n  (pending true)'
)


@dataclass
class Book:
    api: Api
    url: str
    accounts: dict[str, dict[str, Any]]

    def post_template(self, text: str) -> None:
        response = self.api.post(
            f"{self.url}/transaction-templates", text, content_type="text/plain"
        )
        assert response.status_code == 201, response.content

    def account(self, alias: str, **fields: Any) -> dict[str, Any]:
        response = self.api.post(
            f"{self.url}/accounts", {"alias": alias, "assetCode": "BRL", "name": alias, **fields}
        )
        assert response.status_code == 201, response.content
        self.accounts[alias] = response.json()
        return self.accounts[alias]

    def post(self, body: dict[str, Any], **extra: Any) -> Any:
        return self.api.post(f"{self.url}/transactions", body, **extra)

    def fund(self, alias: str, amount: int) -> dict[str, Any]:
        response = self.post(
            {"transactionTypeCode": "FUND", "variables": {"amount": amount, "account": alias}}
        )
        assert response.status_code == 201, response.content
        return response.json()

    def pay(
        self, amount: int, fee: int, source: str = "@alice", destination: str = "@bob", **body: Any
    ) -> Any:
        variables = {"amount": amount, "fee": fee, "source": source, "destination": destination}
        return self.post(
            {"transactionTypeCode": "PAYMENT_WITH_FEE", "variables": variables, **body}
        )

    def balance(self, alias: str) -> dict[str, int]:
        found = self.api.get(f"{self.url}/accounts", {"alias": alias}).json()
        assert len(found) == 1, found
        return found[0]["balance"]

    def available(self, alias: str) -> int:
        return self.balance(alias)["available"]


def make_book(api: Api, ledger_url: str) -> Book:
    """BRL, @alice, @bob and @fees/platform, and the FUND, PAYMENT and HOLD templates, in the
    ledger at ``ledger_url``."""
    created = api.post(
        f"{ledger_url}/instruments", {"name": "Real", "type": "currency", "code": "BRL"}
    )
    assert created.status_code == 201, created.content
    book = Book(api=api, url=ledger_url, accounts={})
    for alias in ("@alice", "@bob", "@fees/platform"):
        book.account(alias)
    book.post_template(FUND)
    book.post_template(PAYMENT)
    book.post_template(HOLD)
    return book


@pytest.fixture
def book(api: Api, ledger_url: str) -> Book:
    return make_book(api, ledger_url)


@pytest.fixture
def tree(book: Book) -> Book:
    """The book's accounts in a tree: @assets over @cash (over @alice and @bob) and
    @fees/platform."""
    book.account("@assets")
    book.account("@cash", parentAccountId=book.accounts["@assets"]["id"])
    for alias, parent in (("@alice", "@cash"), ("@bob", "@cash"), ("@fees/platform", "@assets")):
        moved = book.api.patch(
            f"{book.url}/accounts/{book.accounts[alias]['id']}",
            {"parentAccountId": book.accounts[parent]["id"]},
        )
        assert moved.status_code == 200, moved.content
    return book


def recorded(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str, pick: Any) -> list[Any]:
    """``pick(*args, **kwargs)`` of every call of ``owner.name`` from now on, in order (each
    call then runs as before)."""
    seen: list[Any] = []
    original = getattr(owner, name)

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(pick(*args, **kwargs))
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, spy)
    return seen


def other_connection_sees(sql: str) -> Any:
    """The first value of ``sql`` read by a connection of its own, in another thread."""
    found: list[Any] = []

    def read() -> None:
        try:
            with connection.cursor() as cursor:
                cursor.execute(sql)
                found.append(cursor.fetchone()[0])
        finally:
            connection.close()

    thread = threading.Thread(target=read)
    thread.start()
    thread.join(timeout=30)
    return found[0]


def payment(amount: int, fee: int) -> dict[str, Any]:
    """The body of a PAYMENT_WITH_FEE posting from @alice to @bob."""
    variables = {"amount": amount, "fee": fee, "source": "@alice", "destination": "@bob"}
    return {"transactionTypeCode": "PAYMENT_WITH_FEE", "variables": variables}
