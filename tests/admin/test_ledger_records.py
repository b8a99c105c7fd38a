"""Transactions, operations, balances and idempotency keys in the admin: read-only pages, the
transaction page with its operations, and list pages whose query count does not grow."""

from __future__ import annotations

import pytest

from organizations.models import Balance
from tests.admin.helpers import count_queries, ledger_of
from transactions.models import IdempotencyKey, Operation, Transaction

RECORDS = [
    "transactions/transaction",
    "transactions/operation",
    "organizations/balance",
    "transactions/idempotencykey",
]


def _activity(book, n: int) -> None:
    for i in range(n):
        variables = {"amount": 100, "fee": 1, "source": "@alice", "destination": "@bob"}
        body = {"transactionTypeCode": "PAYMENT_WITH_FEE", "variables": variables}
        sent = book.post(body, HTTP_IDEMPOTENCY_KEY=f"key-{n}-{i}").json()
        book.api.post(f"{book.url}/transactions/{sent['id']}/revert")
        book.pay(50, 0, pending=True)


@pytest.fixture
def busy(book):
    book.fund("@alice", 100_000)
    _activity(book, 1)
    return book


def test_it_shows_a_transaction_with_its_operations_and_balances(admin_client, busy):
    paid = busy.pay(2500, 100).json()
    page = admin_client.get(f"/admin/transactions/transaction/{paid['id']}/change/")
    assert page.status_code == 200
    html = page.content.decode()
    for text in (
        "PAYMENT_WITH_FEE",
        "26.00 BRL",
        "Balance before",
        "Balance after",
        "@fees/platform",
    ):
        assert text in html
    alice = Operation.objects.get(transaction_id=paid["id"], account_alias="@alice")
    assert f"{alice.balance_available / 100:.2f}" in html
    assert f"{alice.balance_available_after / 100:.2f}" in html
    assert 'id="revert_transactions"' in html  # the revert button of a SENT transaction


@pytest.mark.parametrize("page", RECORDS)
def test_it_lists_and_filters_records(admin_client, busy, page):
    ledger = ledger_of(busy)
    assert admin_client.get(f"/admin/{page}/").status_code == 200
    filtered = admin_client.get(f"/admin/{page}/", {"ledger": str(ledger.pk), "q": "a"})
    assert filtered.status_code == 200
    assert ledger.name in filtered.content.decode()  # the sidebar names the chosen ledger
    bad = admin_client.get(f"/admin/{page}/", {"ledger": "not-an-id"})
    assert bad.status_code == 302 and "e=1" in bad["Location"]


@pytest.mark.parametrize("page", RECORDS)
def test_it_never_adds_changes_or_deletes_records(admin_client, busy, page):
    model = {
        "transaction": Transaction,
        "operation": Operation,
        "balance": Balance,
        "idempotencykey": IdempotencyKey,
    }[page.split("/")[1]]
    obj = model.objects.first()
    before = model.objects.count()
    assert admin_client.get(f"/admin/{page}/add/").status_code == 403
    assert admin_client.get(f"/admin/{page}/{obj.pk}/delete/").status_code == 403
    view = admin_client.get(f"/admin/{page}/{obj.pk}/change/")
    assert view.status_code == 200 and 'name="_save"' not in view.content.decode()
    assert admin_client.post(f"/admin/{page}/{obj.pk}/change/", {}).status_code == 403
    deleted = admin_client.post(
        f"/admin/{page}/", {"action": "delete_selected", "_selected_action": [obj.pk]}
    )
    assert deleted.status_code in (200, 302) and model.objects.count() == before


LIST_PAGES = [
    *RECORDS,
    "organizations/organization",
    "organizations/ledger",
    "organizations/account",
    "templates_dsl/transactiontemplate",
    "instruments/instrument",
]


def test_list_pages_run_a_constant_number_of_queries(admin_client, busy):
    ledger = ledger_of(busy)
    tx = Transaction.objects.filter(is_reversal=False, status="SENT").last()
    pages = [f"/admin/{page}/" for page in LIST_PAGES]
    pages += [f"/admin/{page}/?ledger={ledger.pk}" for page in RECORDS]
    pages += [
        f"/admin/transactions/transaction/{tx.pk}/change/",
        f"/admin/organizations/ledger/{ledger.pk}/dashboard/",
    ]
    for url in pages:
        count_queries(admin_client, url)  # warm caches (content types, sessions)
    small = {url: count_queries(admin_client, url) for url in pages}
    _activity(busy, 4)
    for alias in ("@carol", "@dave", "@erin"):
        busy.account(alias)
    busy.pay(2500, 100)
    large = {url: count_queries(admin_client, url) for url in pages}
    assert large == small
    assert max(small.values()) <= 16, small
