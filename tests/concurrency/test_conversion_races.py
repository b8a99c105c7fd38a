"""First conversions racing on PostgreSQL: the conversion accounts (``@conversion/<CODE>``) are
made once, by whichever posting comes first (organizations/contents.py,
``conversion_accounts_ensure``), and every posting converts through them; each asset still
sums to zero (docs/CONVERSIONS.md)."""

from __future__ import annotations

import pytest
from django.db import connection

from organizations.models import Account, Ledger
from tests.concurrency.conftest import run_threads
from tests.conftest import Api
from tests.transactions.test_conversions import EXCHANGE
from transactions.integrity import ledger_check

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="needs PostgreSQL: row locks and concurrent connections",
    ),
]

THREADS = 8


def test_first_conversions_at_once_make_each_conversion_account_once(book):
    api = book.api
    api.post(f"{book.url}/instruments", {"name": "Dollar", "type": "currency", "code": "USD"})
    book.account("@usd", assetCode="USD")
    book.post_template(EXCHANGE)
    rate = {"baseAssetCode": "BRL", "counterAssetCode": "USD", "amount": 18, "scale": 2}
    assert api.post(f"{book.url}/asset-rates", rate).status_code == 201
    book.fund("@alice", 1_000_000)

    def work(index, barrier):
        client = Api(api.token)
        barrier.wait()
        variables = {"amount": 100 + index, "source": "@alice", "destination": "@usd"}
        return client.post(
            f"{book.url}/transactions",
            {"transactionTypeCode": "EXCHANGE", "variables": variables},
        )

    answers = run_threads(THREADS, work)
    assert [r.status_code for r in answers] == [201] * THREADS, [r.content for r in answers]
    made = Account.objects.filter(alias__startswith="@conversion/", deleted_at__isnull=True)
    assert sorted(made.values_list("alias", flat=True)) == ["@conversion/BRL", "@conversion/USD"]
    sent = sum(100 + index for index in range(THREADS))
    assert book.available("@conversion/BRL") == sent
    delivered = sum(r.json()["conversion"]["delivered"]["amount"] for r in answers)
    assert book.available("@usd") == delivered == -book.available("@conversion/USD")
    report = ledger_check(Ledger.objects.get(pk=book.accounts["@alice"]["ledgerId"]))
    assert report.ok, report.violations
