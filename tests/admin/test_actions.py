"""Admin actions call the services: commit, revert and cancel of transactions, each confirmed
with a preview and a reason first, and deactivate (soft delete) of resources, each item with
its own success or refusal message."""

from __future__ import annotations

import datetime as dt

from django.utils import timezone

from instruments.models import Instrument, Rate
from organizations.models import Account, Ledger, Organization, Portfolio, Product
from outbox.models import Event
from tests.admin.helpers import messages_of, run_action, staff_client
from transactions.models import Transaction

TX = "transactions/transaction"


def _confirmed(client, action, *pks, reason="Customer asked, ticket 42"):
    """A list action: the first post answers the confirmation page and moves nothing; the
    second, with a reason, acts."""
    page = run_action(client, TX, action, *pks)
    assert page.status_code == 200 and 'id="confirm-form"' in page.content.decode()
    return run_action(client, TX, action, *pks, _confirm="1", reason=reason)


def test_it_commits_pending_transactions_and_refuses_the_rest(admin_client, book):
    book.fund("@alice", 10_000)
    held = book.pay(100, 1, pending=True).json()
    sent = book.pay(200, 0).json()
    page = run_action(admin_client, TX, "commit_transactions", held["id"], sent["id"])
    html = page.content.decode()
    assert f'id="preview-{held["id"]}"' in html and "SETTLE" in html
    assert "This would be refused: 0099" in html  # the SENT one, in its own preview
    assert Transaction.objects.get(pk=held["id"]).status == "PRE_APPROVED"
    response = _confirmed(admin_client, "commit_transactions", held["id"], sent["id"])
    assert response.status_code == 200
    shown = messages_of(response)
    assert any(held["id"][:8] in m and "committed 1.01 BRL, now SENT" in m for m in shown), shown
    assert any(sent["id"][:8] in m and "0099" in m for m in shown), shown
    assert Transaction.objects.get(pk=held["id"]).status == "SENT"
    assert book.available("@bob") == 300
    (event,) = Event.objects.filter(type="transaction.committed")
    assert event.reason == "Customer asked, ticket 42"
    assert (event.actor_kind, event.actor_name) == ("staff", "admin")


def test_a_list_action_needs_a_reason(admin_client, book):
    book.fund("@alice", 10_000)
    sent = book.pay(2500, 100).json()
    response = run_action(admin_client, TX, "revert_transactions", sent["id"], _confirm="1")
    assert response.status_code == 200 and "This field is required" in response.content.decode()
    too_long = run_action(
        admin_client, TX, "revert_transactions", sent["id"], _confirm="1", reason="x" * 501
    )
    assert "at most 500 characters" in too_long.content.decode()
    assert not Transaction.objects.filter(parent_id=sent["id"]).exists()
    assert book.available("@alice") == 10_000 - 2600


def test_it_reverts_once_and_refuses_a_second_revert(admin_client, book):
    book.fund("@alice", 10_000)
    sent = book.pay(2500, 100).json()
    first = _confirmed(admin_client, "revert_transactions", sent["id"])
    assert any("reverted by" in m for m in messages_of(first))
    assert book.available("@alice") == 10_000 and book.available("@bob") == 0
    again = run_action(admin_client, TX, "revert_transactions", sent["id"])
    assert "This would be refused: 0087" in again.content.decode()
    second = _confirmed(admin_client, "revert_transactions", sent["id"])
    assert any("0087" in m for m in messages_of(second))
    assert Transaction.objects.filter(parent_id=sent["id"], is_reversal=True).count() == 1


def test_it_cancels_pending_transactions_only(admin_client, book):
    book.fund("@alice", 10_000)
    held = book.pay(100, 1, pending=True).json()
    sent = book.pay(100, 1).json()
    response = _confirmed(admin_client, "cancel_transactions", held["id"], sent["id"])
    shown = messages_of(response)
    assert any(held["id"][:8] in m and "canceled by" in m for m in shown), shown
    assert any(sent["id"][:8] in m and "0099" in m for m in shown), shown
    assert Transaction.objects.get(pk=held["id"]).status == "CANCELED"
    assert book.balance("@alice")["onHold"] == 0


def test_the_transaction_page_confirms_each_action_with_a_preview_and_a_reason(admin_client, book):
    book.fund("@alice", 10_000)
    sent = book.pay(2500, 100).json()
    page = f"/admin/{TX}/{sent['id']}/change/"
    html = admin_client.get(page).content.decode()
    act = f"/admin/{TX}/{sent['id']}/act/revert/"
    assert f'href="{act}"' in html and 'id="commit_transactions"' not in html
    preview = admin_client.get(act).content.decode()
    # what the revert would write: @alice back from 74.00 to 100.00 BRL
    assert "@alice" in preview and "74.00 BRL" in preview and "100.00 BRL" in preview
    assert book.available("@alice") == 7_400
    refused = admin_client.post(act, {"_confirm": "1", "reason": "  "})
    assert refused.status_code == 200 and "This field is required" in refused.content.decode()
    assert book.available("@alice") == 7_400
    done = admin_client.post(act, {"_confirm": "1", "reason": "Duplicate payment"})
    assert done.status_code == 302 and done["Location"] == page
    assert book.available("@alice") == 10_000
    (event,) = Event.objects.filter(type="transaction.reverted")
    assert event.reason == "Duplicate payment" and event.actor_kind == "staff"
    # reverted: the page links the reversal and offers no second revert
    after = admin_client.get(page).content.decode()
    reversal = Transaction.objects.get(parent_id=sent["id"], is_reversal=True)
    assert 'id="revert_transactions"' not in after and str(reversal.pk) in after
    assert "This would be refused: 0087" in admin_client.get(act).content.decode()


def test_a_partial_commit_from_the_transaction_page(admin_client, book):
    variables = {"amount": 101, "account": "@bob"}  # one source, one destination
    held = book.post({"transactionTypeCode": "FUND", "pending": True, "variables": variables})
    held = held.json()
    act = f"/admin/{TX}/{held['id']}/act/commit/"
    # the amount previewed whether or not a reason is given yet; no preview of a wrong amount
    previewed = admin_client.post(act, {"_preview": "1", "reason": "", "amount": "0.40"})
    html = previewed.content.decode()
    assert previewed.status_code == 200 and "Commit 0.40 BRL" in html and "errorlist" not in html
    wrong = admin_client.post(act, {"_preview": "1", "reason": "", "amount": "0.401"})
    assert "errorlist" in wrong.content.decode() and 'id="preview-' not in wrong.content.decode()
    assert Transaction.objects.get(pk=held["id"]).status == "PRE_APPROVED"
    too_much = admin_client.post(act, {"_confirm": "1", "reason": "Partial", "amount": "2"})
    shown = messages_of(too_much)
    assert any("commit refused — 0008" in m for m in shown), shown
    assert "This would be refused: 0008" in too_much.content.decode()
    odd = admin_client.post(act, {"_confirm": "1", "reason": "Partial", "amount": "0.401"})
    assert odd.status_code == 200 and "errorlist" in odd.content.decode()
    done = admin_client.post(act, {"_confirm": "1", "reason": "Partial", "amount": "0.40"})
    assert done.status_code == 302
    tx = Transaction.objects.get(pk=held["id"])
    assert (tx.status, tx.amount) == ("SENT", 40)
    assert book.balance("@bob") == {"available": 40, "onHold": 0, "scale": 2}


def test_a_hold_past_its_expiry_is_expired_from_its_page_with_a_reason(admin_client, book):
    book.fund("@alice", 10_000)
    held = book.pay(100, 1, pending=True).json()
    later = book.pay(200, 2, pending=True).json()
    past = timezone.now() - dt.timedelta(minutes=1)
    Transaction.objects.filter(pk=held["id"]).update(expires_at=past)  # expire_holds not run
    page = admin_client.get(f"/admin/{TX}/{held['id']}/change/").content.decode()
    act = f"/admin/{TX}/{held['id']}/act/expire/"
    assert f'href="{act}"' in page and 'id="commit_transactions"' not in page
    preview = admin_client.get(act).content.decode()
    assert "RELEASE" in preview and "@alice" in preview
    assert book.balance("@alice")["onHold"] == 101 + 202
    done = admin_client.post(act, {"_confirm": "1", "reason": "Worker down, customer waiting"})
    assert done.status_code == 302
    assert Transaction.objects.get(pk=held["id"]).status == "CANCELED"
    assert book.balance("@alice")["onHold"] == 202
    (event,) = Event.objects.filter(type="transaction.canceled")
    assert event.reason == "Worker down, customer waiting" and event.actor_kind == "staff"
    # a hold not yet past its expiry is not expired: its page offers commit, the action refuses
    other = admin_client.get(f"/admin/{TX}/{later['id']}/change/").content.decode()
    assert 'id="expire_transactions"' not in other and 'id="commit_transactions"' in other
    refused = admin_client.get(f"/admin/{TX}/{later['id']}/act/expire/").content.decode()
    assert "This would be refused: 0099" in refused and "past its expiry" in refused
    response = _confirmed(admin_client, "expire_transactions", later["id"])
    assert any("expire refused — 0099" in m for m in messages_of(response))
    assert Transaction.objects.get(pk=later["id"]).status == "PRE_APPROVED"


def test_the_confirmation_page_needs_the_change_permission_and_a_known_action(admin_client, book):
    book.fund("@alice", 10_000)
    sent = book.pay(100, 1).json()
    viewer = staff_client("transactions.view_transaction")
    assert viewer.get(f"/admin/{TX}/{sent['id']}/act/revert/").status_code == 403
    assert admin_client.get(f"/admin/{TX}/{sent['id']}/act/explode/").status_code == 404
    missing = "00000000-0000-7000-8000-000000000000"
    assert admin_client.get(f"/admin/{TX}/{missing}/act/revert/").status_code == 404


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


def test_a_reason_is_kept_on_every_event_the_action_writes(admin_client, book, api):
    """A monitor that the revert trips fires with the revert's reason, on either database: the
    events of a posting's own statement carry the reason too (ledgerproject/actors.py)."""
    book.fund("@alice", 10_000)
    sent = book.pay(2500, 100).json()
    body = {"accountId": book.accounts["@bob"]["id"], "measure": "available",
            "condition": "below", "threshold": {"amount": 1, "scale": 2}}  # fmt: skip
    assert api.post(f"{book.url}/balance-monitors", body).status_code == 201
    act = f"/admin/{TX}/{sent['id']}/act/revert/"
    assert admin_client.post(act, {"_confirm": "1", "reason": "Refund"}).status_code == 302
    assert Event.objects.get(type="transaction.reverted").reason == "Refund"
    assert Event.objects.get(type="balance_monitor.triggered").reason == "Refund"
    before = Event.objects.get(type="transaction.posted", resource_id=sent["id"])
    written = Event.objects.filter(seq__gt=before.seq).exclude(type="balance_monitor.created")
    assert {e.reason for e in written} == {"Refund"}, [(e.type, e.reason) for e in written]
