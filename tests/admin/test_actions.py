"""Admin actions call the services: commit, revert and cancel of transactions, and deactivate
(soft delete) of resources, each item with its own success or refusal message."""

from __future__ import annotations

from instruments.models import Instrument, Rate
from organizations.models import Account, Ledger, Organization, Portfolio, Product
from tests.admin.helpers import messages_of, run_action
from transactions.models import Transaction

TX = "transactions/transaction"


def test_it_commits_pending_transactions_and_refuses_the_rest(admin_client, book):
    book.fund("@alice", 10_000)
    held = book.pay(100, 1, pending=True).json()
    sent = book.pay(200, 0).json()
    response = run_action(admin_client, TX, "commit_transactions", held["id"], sent["id"])
    assert response.status_code == 200
    shown = messages_of(response)
    assert any(held["id"][:8] in m and "committed, now SENT" in m for m in shown), shown
    assert any(sent["id"][:8] in m and "0099" in m for m in shown), shown
    assert Transaction.objects.get(pk=held["id"]).status == "SENT"
    assert book.available("@bob") == 300


def test_it_reverts_once_and_refuses_a_second_revert(admin_client, book):
    book.fund("@alice", 10_000)
    sent = book.pay(2500, 100).json()
    first = run_action(admin_client, TX, "revert_transactions", sent["id"])
    assert any("reverted by" in m for m in messages_of(first))
    assert book.available("@alice") == 10_000 and book.available("@bob") == 0
    second = run_action(admin_client, TX, "revert_transactions", sent["id"])
    assert any("0087" in m for m in messages_of(second))
    assert Transaction.objects.filter(parent_id=sent["id"], is_reversal=True).count() == 1


def test_it_cancels_pending_transactions_only(admin_client, book):
    book.fund("@alice", 10_000)
    held = book.pay(100, 1, pending=True).json()
    sent = book.pay(100, 1).json()
    response = run_action(admin_client, TX, "cancel_transactions", held["id"], sent["id"])
    shown = messages_of(response)
    assert any(held["id"][:8] in m and "canceled by" in m for m in shown), shown
    assert any(sent["id"][:8] in m and "0099" in m for m in shown), shown
    assert Transaction.objects.get(pk=held["id"]).status == "CANCELED"
    assert book.balance("@alice")["onHold"] == 0


def test_the_transaction_page_buttons_run_the_action_and_come_back(admin_client, book):
    book.fund("@alice", 10_000)
    held = book.pay(100, 1, pending=True).json()
    page = f"/admin/transactions/transaction/{held['id']}/change/"
    html = admin_client.get(page).content.decode()
    assert 'id="commit_transactions"' in html and 'id="cancel_transactions"' in html
    assert 'id="revert_transactions"' not in html
    response = admin_client.post(
        f"/admin/{TX}/",
        {"action": "commit_transactions", "_selected_action": held["id"], "_return_to": page},
    )
    assert response.status_code == 302 and response["Location"] == page
    assert Transaction.objects.get(pk=held["id"]).status == "SENT"
    outside = admin_client.post(
        f"/admin/{TX}/",
        {
            "action": "revert_transactions",
            "_selected_action": held["id"],
            "_return_to": "https://elsewhere.example/",
        },
    )
    assert outside.status_code == 302 and outside["Location"].startswith("/admin/")


def test_it_deactivates_resources_through_the_services(admin_client, book, api, ledger_url):
    book.fund("@alice", 1_000)
    portfolio = api.post(f"{ledger_url}/portfolios", {"name": "Retail"}).json()
    product = api.post(f"{ledger_url}/products", {"name": "Gold"}).json()
    api.post(f"{ledger_url}/instruments", {"name": "Dollar", "type": "currency", "code": "USD"})
    rate = api.post(
        f"{ledger_url}/asset-rates",
        {"baseAssetCode": "USD", "counterAssetCode": "BRL", "amount": 5, "scale": 0},
    ).json()
    alice, bob = book.accounts["@alice"], book.accounts["@bob"]

    response = run_action(
        admin_client, "organizations/account", "deactivate", alice["id"], bob["id"]
    )
    shown = messages_of(response)
    assert any("@alice: refused" in m and "0012" in m for m in shown), shown
    assert any("Deactivated 1 accounts: @bob" in m for m in shown), shown
    assert Account.objects.get(pk=bob["id"]).deleted_at is not None
    assert Account.objects.get(pk=alice["id"]).deleted_at is None
    again = run_action(admin_client, "organizations/account", "deactivate", bob["id"])
    assert any("already deactivated" in m for m in messages_of(again))

    usd = Instrument.objects.get(code="USD")
    for page, model, pk in [
        ("organizations/portfolio", Portfolio, portfolio["id"]),
        ("organizations/product", Product, product["id"]),
        ("instruments/rate", Rate, rate["id"]),
        ("instruments/instrument", Instrument, usd.pk),
    ]:
        run_action(admin_client, page, "deactivate", pk)
        assert model.objects.get(pk=pk).deleted_at is not None, page
    assert Rate.objects.get(pk=rate["id"]).status_code == "INACTIVE"
    assert Account.objects.get(alias="@external/USD").deleted_at is not None

    ledger = Ledger.objects.get()
    refused = run_action(
        admin_client, "organizations/organization", "deactivate", ledger.organization_id
    )
    assert any("0008" in m for m in messages_of(refused))
    run_action(admin_client, "organizations/ledger", "deactivate", ledger.pk)
    run_action(admin_client, "organizations/organization", "deactivate", ledger.organization_id)
    assert Organization.objects.get().deleted_at is not None
