"""Balance monitors (docs/BALANCE-MONITORS.md): a condition on an account's available amount,
its amount on hold or the overdraft it uses, against a threshold; the event
``balance_monitor.triggered`` once each time a change of the balance makes the condition true
(again only after it was false), or, for ``crossing``, each time the value crosses."""

from __future__ import annotations

import pytest
from django.utils import timezone

from journal.services import seal
from organizations.models import Balance
from outbox.models import Event
from tests.admin.helpers import ledger_of
from tests.conftest import assert_error
from tests.organizations.helpers import other_ledger_url  # noqa: F401
from transactions.expiry import expire_due
from transactions.integrity import ledger_check
from transactions.models import Transaction

pytestmark = pytest.mark.django_db

TRIGGERED = "balance_monitor.triggered"


def _monitor(book, alias: str, measure: str, condition: str, amount: int, scale: int = 2, **rest):
    body = {
        "accountId": book.accounts[alias]["id"],
        "measure": measure,
        "condition": condition,
        "threshold": {"amount": amount, "scale": scale},
        **rest,
    }
    return book.api.post(f"{book.url}/balance-monitors", body)


def _made(book, *args, **kwargs) -> dict:
    response = _monitor(book, *args, **kwargs)
    assert response.status_code == 201, response.content
    return response.json()


def _fired(monitor: dict | None = None) -> list[Event]:
    found = Event.objects.filter(type=TRIGGERED).order_by("created_at", "event_id")
    if monitor is not None:
        found = found.filter(resource_id=monitor["id"])
    return list(found)


def test_a_monitor_fires_once_per_crossing_and_again_only_after_it_cleared(book):
    book.fund("@alice", 100_000)  # 1,000.00
    low = _made(book, "@alice", "available", "below", 50_000, description="low funds")
    assert low["conditionHolds"] is False and low["lastTriggeredAt"] is None
    assert book.pay(40_000, 0).status_code == 201  # 600.00: not yet
    assert _fired() == []
    paid = book.pay(20_000, 0).json()  # 400.00: below
    (event,) = _fired()
    assert event.data["accountAlias"] == "@alice"
    assert event.data["value"] == {"amount": 40_000, "scale": 2}
    assert event.data["transactionId"] == paid["id"]
    assert event.data["operationId"] in {op["id"] for op in paid["operations"]}
    assert event.data["monitor"]["id"] == low["id"]
    assert event.data["monitor"]["conditionHolds"] is True
    assert book.pay(5_000, 0).status_code == 201  # still below: nothing new
    assert len(_fired()) == 1
    book.fund("@alice", 30_000)  # 650.00: above again, re-armed, nothing fired
    assert len(_fired()) == 1
    read = book.api.get(f"{book.url}/balance-monitors/{low['id']}").json()
    assert read["conditionHolds"] is False and read["lastTriggeredAt"] is not None
    assert book.pay(20_000, 0).status_code == 201  # 450.00: below again
    assert len(_fired(low)) == 2
    # The events API and every subscriber see it like any event.
    listed = book.api.get(f"/v1/organizations/{paid['organizationId']}/events", {"type": TRIGGERED})
    assert listed.status_code == 200, listed.content
    assert [e["type"] for e in listed.json()] == [TRIGGERED, TRIGGERED]
    # The journal holds them like every event, and the books still check.
    seal(event.organization_id, event.ledger_id)
    report = ledger_check(ledger_of(book))
    assert report.ok, report.violations


def test_a_monitor_made_while_its_condition_holds_waits_for_the_next_crossing(book):
    book.fund("@alice", 1_000)
    low = _made(book, "@alice", "available", "below", 50_000)
    assert low["conditionHolds"] is True
    assert book.pay(100, 0).status_code == 201
    assert _fired() == []


def test_crossing_fires_both_ways_and_above_fires_going_up(book):
    book.fund("@alice", 10_000)
    crossing = _made(book, "@bob", "available", "crossing", 5_000)
    above = _made(book, "@bob", "available", "above", 7_000)
    book.pay(5_000, 0)  # @bob 50.00: at the threshold, which is "at or above"
    book.pay(2_500, 0)  # 75.00: above 70.00
    assert [str(e.resource_id) for e in _fired()] == [crossing["id"], above["id"]]
    revert = book.api.post(
        f"{book.url}/transactions/{Transaction.objects.latest('created_at').pk}/revert"
    )
    assert revert.status_code == 201, revert.content  # back to 50.00: neither fires
    assert len(_fired()) == 2
    paid = book.pay(100, 0, source="@bob", destination="@alice")  # 49.00: crosses down
    assert paid.status_code == 201
    assert [str(e.resource_id) for e in _fired()][-1] == crossing["id"]
    assert len(_fired(crossing)) == 2


def test_on_hold_and_overdraft_used_are_watched_through_holds_commits_and_cancels(book):
    book.fund("@alice", 10_000)
    held = _made(book, "@alice", "onHold", "above", 2_000)
    overdraft = book.api.patch(
        f"{book.url}/accounts/{book.accounts['@alice']['id']}",
        {"overdraftLimit": {"amount": 50_000, "scale": 2}},
    )
    assert overdraft.status_code == 200, overdraft.content
    used = _made(book, "@alice", "overdraftUsed", "above", 0)
    hold = book.pay(3_000, 0, pending=True).json()
    assert [str(e.resource_id) for e in _fired()] == [held["id"]]
    canceled = book.api.post(f"{book.url}/transactions/{hold['id']}/cancel")
    assert canceled.status_code == 201, canceled.content
    again = book.pay(3_000, 0, pending=True).json()
    assert len(_fired(held)) == 2
    committed = book.api.post(f"{book.url}/transactions/{again['id']}/commit")
    assert committed.status_code == 200, committed.content
    assert _fired(used) == []
    book.pay(8_000, 0)  # 70.00 - 80.00: 10.00 of the overdraft used
    (event,) = _fired(used)
    assert event.data["value"] == {"amount": 1_000, "scale": 2}


def test_a_batch_that_crosses_and_comes_back_fires_for_the_crossing(book):
    book.fund("@alice", 10_000)
    low = _made(book, "@alice", "available", "below", 5_000)
    items = [
        {"transactionTypeCode": "PAYMENT_WITH_FEE",
         "variables": {"amount": 6_000, "fee": 0, "source": "@alice", "destination": "@bob"}},
        {"transactionTypeCode": "FUND", "variables": {"amount": 6_000, "account": "@alice"}},
    ]  # fmt: skip
    response = book.api.post(f"{book.url}/transactions/batch", {"transactions": items})
    assert response.status_code == 201, response.content
    assert len(_fired(low)) == 1
    read = book.api.get(f"{book.url}/balance-monitors/{low['id']}").json()
    assert read["conditionHolds"] is False  # 100.00 again after the batch


def test_a_refused_posting_fires_nothing(book):
    book.fund("@alice", 10_000)
    _made(book, "@alice", "available", "below", 5_000)
    assert_error(book.pay(20_000, 0), 422, "0018")
    assert _fired() == []


def test_monitors_are_checked_listed_changed_and_deleted(book, other_ledger_url):  # noqa: F811
    book.fund("@alice", 10_000)
    url = f"{book.url}/balance-monitors"
    assert_error(_monitor(book, "@alice", "balance", "below", 1), 400, "0047")
    assert_error(_monitor(book, "@alice", "available", "under", 1), 400, "0047")
    assert_error(_monitor(book, "@alice", "onHold", "below", -1), 400, "0047")
    assert_error(_monitor(book, "@alice", "available", "below", 1, scale=19), 400, "0047")
    made = [_made(book, "@alice", "available", "below", n) for n in range(10)]
    assert_error(_monitor(book, "@alice", "available", "below", 11), 422, "0008")
    bob = _made(book, "@bob", "available", "above", 1)
    listed = book.api.get(url, {"accountId": book.accounts["@bob"]["id"]}).json()
    assert [m["id"] for m in listed] == [bob["id"]]
    changed = book.api.patch(
        f"{url}/{made[0]['id']}", {"threshold": {"amount": 20_000, "scale": 2}}
    )
    assert changed.status_code == 200, changed.content
    assert changed.json()["threshold"] == {"amount": 20_000, "scale": 2}
    assert changed.json()["conditionHolds"] is True  # 100.00 is below 200.00 now
    assert book.api.delete(f"{url}/{bob['id']}").status_code == 204
    assert_error(book.api.delete(f"{url}/{bob['id']}"), 400, "0013")
    book.pay(100, 0, destination="@bob")
    assert _fired() == []  # a deleted monitor watches nothing
    assert _made(book, "@bob", "available", "above", 1)["conditionHolds"] is True


def test_the_back_office_lists_monitors_and_makes_one(admin_client, book):
    book.fund("@alice", 10_000)
    monitor = _made(book, "@alice", "available", "below", 5_000, description="low funds")
    listing = admin_client.get("/admin/organizations/balancemonitor/").content.decode()
    assert "low funds" in listing and "@alice" in listing
    page = admin_client.get(f"/admin/organizations/balancemonitor/{monitor['id']}/change/")
    assert page.status_code == 200
    added = admin_client.post(
        "/admin/organizations/balancemonitor/add/",
        {
            "ledger": ledger_of(book).pk,
            "account": book.accounts["@bob"]["id"],
            "measure": "available",
            "condition": "above",
            "threshold": "1",
            "threshold_scale": "0",
            "description": "big",
        },
    )
    assert added.status_code == 302, added.content.decode()[:2000]
    book.pay(200, 0)
    assert [e.data["accountAlias"] for e in _fired()] == ["@bob"]


def test_an_expired_hold_that_returns_funds_fires(book):
    book.fund("@alice", 10_000)
    back = _made(book, "@alice", "available", "above", 9_000)
    assert back["conditionHolds"] is True
    hold = book.pay(2_000, 0, pending=True).json()  # 80.00 available: clears
    Transaction.objects.filter(pk=hold["id"]).update(expires_at=timezone.now())
    assert expire_due(limit=10) == 1  # released: 100.00 again
    (event,) = _fired(back)
    assert event.data["transactionId"] != hold["id"]  # the cancellation that released it


def test_an_inactive_monitor_watches_nothing_until_set_active(book):
    book.fund("@alice", 10_000)
    low = _made(book, "@alice", "available", "below", 5_000)
    url = f"{book.url}/balance-monitors/{low['id']}"
    assert book.api.patch(url, {"status": {"code": "INACTIVE"}}).status_code == 200
    book.pay(6_000, 0)  # 40.00: would have fired
    assert _fired() == []
    active = book.api.patch(url, {"status": {"code": "ACTIVE"}}).json()
    assert active["conditionHolds"] is True  # takes the balance as it finds it
    book.pay(100, 0)
    assert _fired() == []
    book.fund("@alice", 10_000)  # 139.00: clears
    book.pay(9_000, 0)  # 49.00: below again
    assert len(_fired(low)) == 1


def test_deleting_an_account_deletes_its_monitors(book):
    monitor = _made(book, "@bob", "available", "above", 1)
    balance = Balance.objects.get(account_id=book.accounts["@bob"]["id"])
    assert balance.monitored is True
    deleted = book.api.delete(f"{book.url}/accounts/{book.accounts['@bob']['id']}")
    assert deleted.status_code == 204, deleted.content
    read = book.api.get(f"{book.url}/balance-monitors/{monitor['id']}").json()
    assert read["deletedAt"] is not None
    balance.refresh_from_db()
    assert balance.monitored is False
    assert Event.objects.filter(type="balance_monitor.deleted", resource_id=monitor["id"]).exists()


def test_thresholds_and_accounts_are_checked(book, other_ledger_url):  # noqa: F811
    assert_error(_monitor(book, "@alice", "available", "below", 10**38), 400, "0047")
    assert _monitor(book, "@alice", "available", "below", -(10**37)).status_code == 201
    elsewhere = book.api.post(
        f"{other_ledger_url}/balance-monitors",
        {"accountId": book.accounts["@alice"]["id"], "measure": "available",
         "condition": "below", "threshold": {"amount": 1, "scale": 0}},
    )  # fmt: skip
    assert_error(elsewhere, 422, "0008")
    assert elsewhere.json()["fields"] == {"accountId": "not an active account of this ledger"}
