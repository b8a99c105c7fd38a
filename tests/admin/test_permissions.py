"""Staff see and do only what their permissions allow, on model pages and on the ledger's own
pages (dashboard: view ledger + view transaction; posting: add transaction; commit, revert and
cancel: change transaction)."""

from __future__ import annotations

import pytest

from tests.admin.helpers import ledger_of, staff_client
from transactions.models import Transaction


@pytest.fixture
def main_ledger(book):
    book.fund("@alice", 10_000)
    return ledger_of(book)


def test_a_staff_user_without_permissions_sees_nothing(main_ledger):
    client = staff_client()
    index = client.get("/admin/").content.decode()
    assert "/admin/transactions/transaction/" not in index
    assert "/admin/organizations/ledger/" not in index
    for url in (
        "/admin/transactions/transaction/",
        "/admin/organizations/balance/",
        f"/admin/organizations/ledger/{main_ledger.pk}/change/",
        f"/admin/organizations/ledger/{main_ledger.pk}/dashboard/",
        f"/admin/organizations/ledger/{main_ledger.pk}/post/",
    ):
        assert client.get(url).status_code == 403, url


def test_view_permissions_open_only_their_models_and_the_dashboard(book, main_ledger):
    sent = book.pay(100, 1).json()
    client = staff_client("organizations.view_ledger", "transactions.view_transaction")
    index = client.get("/admin/").content.decode()
    assert "/admin/transactions/transaction/" in index
    assert "/admin/organizations/balance/" not in index
    assert client.get("/admin/organizations/balance/").status_code == 403
    assert client.get(f"/admin/organizations/ledger/{main_ledger.pk}/dashboard/").status_code == 200
    assert client.get(f"/admin/organizations/ledger/{main_ledger.pk}/post/").status_code == 403
    listing = client.get("/admin/transactions/transaction/").content.decode()
    assert "revert_transactions" not in listing
    page = client.get(f"/admin/transactions/transaction/{sent['id']}/change/").content.decode()
    assert 'id="revert_transactions"' not in page
    client.post(
        "/admin/transactions/transaction/",
        {
            "action": "revert_transactions",
            "_selected_action": [sent["id"]],
            "_confirm": "1",
            "reason": "no permission",
        },
    )
    assert not Transaction.objects.filter(parent_id=sent["id"]).exists()


def test_a_dashboard_needs_the_transaction_view_permission_too(main_ledger):
    client = staff_client("organizations.view_ledger")
    assert client.get(f"/admin/organizations/ledger/{main_ledger.pk}/change/").status_code == 200
    assert client.get(f"/admin/organizations/ledger/{main_ledger.pk}/dashboard/").status_code == 403


def test_add_and_change_permissions_open_posting_and_the_actions(book, main_ledger):
    client = staff_client(
        "organizations.view_ledger",
        "transactions.view_transaction",
        "transactions.add_transaction",
        "transactions.change_transaction",
    )
    url = f"/admin/organizations/ledger/{main_ledger.pk}/post/"
    response = client.post(
        url,
        {
            "template": "PAYMENT_WITH_FEE",
            "var_amount": "1.00",
            "var_fee": "0",
            "var_source": "@alice",
            "var_destination": "@bob",
            "_post": "1",
            "reason": "Desk request",
        },
    )
    assert response.status_code == 302
    sent = Transaction.objects.get(type="PAYMENT_WITH_FEE")
    client.post(
        "/admin/transactions/transaction/",
        {
            "action": "revert_transactions",
            "_selected_action": [str(sent.pk)],
            "_confirm": "1",
            "reason": "Posted twice",
        },
    )
    assert Transaction.objects.filter(parent=sent, is_reversal=True).exists()


def test_posting_without_transaction_view_returns_to_the_posting_page(main_ledger):
    client = staff_client("organizations.view_ledger", "transactions.add_transaction")
    url = f"/admin/organizations/ledger/{main_ledger.pk}/post/"
    response = client.post(
        url,
        {
            "template": "FUND",
            "var_amount": "0.05",
            "var_account": "@bob",
            "_post": "1",
            "reason": "Desk request",
        },
    )
    assert response.status_code == 302 and response["Location"] == f"{url}?template=FUND"


def test_a_missing_ledger_is_not_found(admin_client, db):
    for page in ("dashboard", "post"):
        url = f"/admin/organizations/ledger/00000000-0000-0000-0000-000000000000/{page}/"
        assert admin_client.get(url).status_code == 404
        assert admin_client.get(f"/admin/organizations/ledger/nope/{page}/").status_code == 404
