"""Balance monitors on account trees (docs/BALANCE-MONITORS.md): a monitor with ``tree`` watches
an account's rolled-up balance in one asset, its own plus every account's under it, and fires
once per crossing whichever accounts of the tree the postings touch. What it last saw is always
the tree's sum; a new account under it is watched, a move re-bases it without an event."""

from __future__ import annotations

import pytest

from organizations.models import Balance, BalanceMonitor
from outbox.models import Event
from tests.admin.helpers import ledger_of
from tests.conftest import assert_error
from tests.transactions.conftest import FUND
from tests.transactions.test_account_trees import _move, _rolled_up
from transactions.integrity import ledger_check

pytestmark = pytest.mark.django_db

TRIGGERED = "balance_monitor.triggered"


def _watch(book, alias: str, condition: str, amount: int, measure: str = "available", **rest):
    body = {
        "accountId": book.accounts[alias]["id"],
        "tree": True,
        "measure": measure,
        "condition": condition,
        "threshold": {"amount": amount, "scale": 2},
        **rest,
    }
    response = book.api.post(f"{book.url}/balance-monitors", body)
    assert response.status_code == 201, response.content
    return response.json()


def _fired(monitor: dict) -> list[Event]:
    found = Event.objects.filter(type=TRIGGERED, resource_id=monitor["id"])
    return list(found.order_by("created_at", "event_id"))


def _seen_is_the_trees_sum(book, monitor: dict) -> None:
    """What the monitor keeps is what a read of the tree answers, exactly."""
    row = BalanceMonitor.objects.get(pk=monitor["id"])
    alias = next(a for a, acc in book.accounts.items() if acc["id"] == str(row.account_id))
    rolled = {b["assetCode"]: b for b in _rolled_up(book, alias)}.get(row.asset_code)
    seen = dict(row.seen)
    scale = max(seen["scale"], rolled["scale"] if rolled else 0)
    for key in ("available", "onHold"):
        mine = seen[key] * 10 ** (scale - seen["scale"])
        theirs = rolled[key] * 10 ** (scale - rolled["scale"]) if rolled else 0
        assert mine == theirs, (key, seen, rolled)


def _watched(book, alias: str) -> bool:
    return bool(Balance.objects.get(account_id=book.accounts[alias]["id"]).monitored)


def test_a_tree_monitor_fires_once_per_crossing_of_the_trees_sum(tree):
    tree.fund("@alice", 60_000)
    tree.fund("@bob", 60_000)  # @cash: 1,200.00 under it
    low = _watch(tree, "@cash", "below", 100_000, description="cash low")
    assert low["tree"] is True and low["assetCode"] == "BRL"
    assert low["conditionHolds"] is False
    assert all(_watched(tree, a) for a in ("@cash", "@alice", "@bob"))
    assert not _watched(tree, "@fees/platform")  # under @assets, not under @cash
    # A payment inside the tree moves nothing out of it.
    assert tree.pay(50_000, 0, source="@alice", destination="@bob").status_code == 201
    assert _fired(low) == []
    # Money leaving through either child counts: 1,200 - 150 - 100 = 950.00, below.
    assert tree.pay(15_000, 0, source="@bob", destination="@fees/platform").status_code == 201
    assert _fired(low) == []
    paid = tree.pay(10_000, 0, source="@alice", destination="@fees/platform").json()
    (event,) = _fired(low)
    assert event.data["accountId"] == tree.accounts["@cash"]["id"]
    assert event.data["accountAlias"] == "@cash"
    assert event.data["operationAccountId"] == tree.accounts["@alice"]["id"]
    assert event.data["transactionId"] == paid["id"]
    assert event.data["value"] == {"amount": 95_000, "scale": 2}
    assert event.data["balance"] == {"available": 95_000, "onHold": 0, "scale": 2}
    tree.pay(1_000, 0, source="@bob", destination="@fees/platform")  # still below
    assert len(_fired(low)) == 1
    tree.fund("@bob", 20_000)  # 1,140.00: cleared
    tree.pay(20_000, 0, source="@bob", destination="@fees/platform")  # 940.00: again
    assert len(_fired(low)) == 2
    _seen_is_the_trees_sum(tree, low)
    report = ledger_check(ledger_of(tree))
    assert report.ok, report.violations


def test_holds_and_a_batch_crossing_and_back_are_seen_in_the_tree(tree):
    tree.fund("@alice", 10_000)
    held = _watch(tree, "@assets", "above", 1_000, measure="onHold")
    hold = tree.pay(2_000, 0, source="@alice", destination="@bob", pending=True).json()
    assert len(_fired(held)) == 1
    _seen_is_the_trees_sum(tree, held)
    canceled = tree.api.post(f"{tree.url}/transactions/{hold['id']}/cancel")
    assert canceled.status_code == 201, canceled.content
    _seen_is_the_trees_sum(tree, held)
    low = _watch(tree, "@cash", "below", 5_000)
    items = [
        {"transactionTypeCode": "PAYMENT_WITH_FEE",
         "variables": {"amount": 6_000, "fee": 0, "source": "@alice",
                       "destination": "@fees/platform"}},
        {"transactionTypeCode": "FUND", "variables": {"amount": 6_000, "account": "@bob"}},
    ]  # fmt: skip
    response = tree.api.post(f"{tree.url}/transactions/batch", {"transactions": items})
    assert response.status_code == 201, response.content
    assert len(_fired(low)) == 1  # down to 40.00, then back to 100.00
    assert BalanceMonitor.objects.get(pk=low["id"]).holds is False
    _seen_is_the_trees_sum(tree, low)


def test_a_new_account_under_a_watched_tree_is_watched(tree):
    tree.fund("@alice", 10_000)
    low = _watch(tree, "@assets", "below", 5_000)
    carol = tree.account("@carol", parentAccountId=tree.accounts["@cash"]["id"])
    assert _watched(tree, "@carol")
    tree.fund("@carol", 1_000)
    tree.pay(6_000, 0, source="@alice", destination="@carol")  # inside: nothing
    assert _fired(low) == []
    paid = tree.pay(7_000, 0, source="@carol", destination="@outside")
    assert paid.status_code == 422  # no such account: refused, and nothing fires
    tree.account("@outside")
    tree.pay(7_000, 0, source="@carol", destination="@outside")  # 110 - 70 = 40.00
    (event,) = _fired(low)
    assert event.data["operationAccountId"] == carol["id"]
    _seen_is_the_trees_sum(tree, low)


def test_a_move_rebases_the_monitors_above_without_an_event(tree):
    tree.fund("@alice", 10_000)
    tree.fund("@bob", 10_000)
    low = _watch(tree, "@cash", "below", 15_000)
    assert _move(tree, "@bob", "@assets").status_code == 200  # @cash: 100.00, below
    assert _fired(low) == []
    assert BalanceMonitor.objects.get(pk=low["id"]).holds is True
    _seen_is_the_trees_sum(tree, low)
    assert not _watched(tree, "@bob")
    tree.pay(1_000, 0, source="@bob", destination="@fees/platform")  # not in @cash any more
    _seen_is_the_trees_sum(tree, low)
    assert _move(tree, "@bob", "@cash").status_code == 200  # 190.00: cleared, no event
    assert _watched(tree, "@bob")
    assert _fired(low) == []
    tree.pay(5_000, 0, source="@bob", destination="@fees/platform")  # 140.00: below
    assert len(_fired(low)) == 1
    _seen_is_the_trees_sum(tree, low)


def test_other_assets_in_the_tree_do_not_count(tree):
    created = tree.api.post(
        f"{tree.url}/instruments", {"name": "Dollar", "type": "currency", "code": "USD"}
    )
    assert created.status_code == 201, created.content
    tree.account("@dollars", assetCode="USD", parentAccountId=tree.accounts["@cash"]["id"])
    tree.fund("@alice", 10_000)
    brl = _watch(tree, "@cash", "below", 5_000)
    usd = _watch(tree, "@cash", "above", 0, assetCode="USD")
    assert usd["assetCode"] == "USD"
    tree.post_template(FUND.replace("BRL", "USD").replace("(code FUND)", "(code FUND_USD)"))
    fund_usd = tree.post(
        {"transactionTypeCode": "FUND_USD", "variables": {"amount": 500, "account": "@dollars"}}
    )
    assert fund_usd.status_code == 201, fund_usd.content
    assert len(_fired(usd)) == 1 and _fired(brl) == []
    _seen_is_the_trees_sum(tree, usd)
    _seen_is_the_trees_sum(tree, brl)


def test_deleting_a_tree_monitor_stops_watching_the_tree(tree):
    own = tree.api.post(
        f"{tree.url}/balance-monitors",
        {"accountId": tree.accounts["@bob"]["id"], "measure": "available",
         "condition": "above", "threshold": {"amount": 1, "scale": 0}},
    )  # fmt: skip
    assert own.status_code == 201, own.content
    low = _watch(tree, "@cash", "below", 5_000)
    assert _watched(tree, "@alice") and _watched(tree, "@bob")
    deleted = tree.api.delete(f"{tree.url}/balance-monitors/{low['id']}")
    assert deleted.status_code == 204, deleted.content
    assert not _watched(tree, "@alice") and not _watched(tree, "@cash")
    assert _watched(tree, "@bob")  # its own monitor still watches it


def test_tree_monitors_are_checked_and_fixed_once_made(tree):
    url = f"{tree.url}/balance-monitors"
    body = {"accountId": tree.accounts["@alice"]["id"], "measure": "available",
            "condition": "below", "threshold": {"amount": 1, "scale": 0}}  # fmt: skip
    wrong = tree.api.post(url, {**body, "assetCode": "USD"})
    assert_error(wrong, 400, "0047")
    assert wrong.json()["fields"] == {"assetCode": "the account holds BRL"}
    unknown = tree.api.post(url, {**body, "tree": True, "assetCode": "XYZ"})
    assert_error(unknown, 422, "0034")
    assert unknown.json()["fields"] == {"assetCode": "not an active instrument of this ledger"}
    assert_error(tree.api.post(url, {**body, "tree": "yes"}), 400, "0047")
    account = tree.api.post(url, body).json()
    assert account["tree"] is False and account["assetCode"] == "BRL"
    watched = _watch(tree, "@cash", "below", 1)
    assert_error(tree.api.patch(f"{url}/{watched['id']}", {"tree": False}), 400, "0006")
    changed = tree.api.patch(f"{url}/{watched['id']}", {"threshold": {"amount": 5, "scale": 0}})
    assert changed.status_code == 200, changed.content
    assert changed.json()["tree"] is True and changed.json()["conditionHolds"] is True


def test_the_back_office_makes_a_tree_monitor(admin_client, tree):
    tree.fund("@alice", 10_000)
    added = admin_client.post(
        "/admin/organizations/balancemonitor/add/",
        {
            "ledger": ledger_of(tree).pk,
            "account": tree.accounts["@cash"]["id"],
            "tree": "on",
            "asset_code": "",
            "measure": "available",
            "condition": "below",
            "threshold": "5000",
            "threshold_scale": "2",
            "description": "cash low",
        },
    )
    assert added.status_code == 302, added.content.decode()[:2000]
    monitor = BalanceMonitor.objects.get(description="cash low")
    assert monitor.tree is True and monitor.asset_code == "BRL"
    listing = admin_client.get("/admin/organizations/balancemonitor/").content.decode()
    assert "the account&#x27;s tree" in listing or "the account's tree" in listing
    tree.pay(6_000, 0, source="@alice", destination="@fees/platform")
    assert len(_fired({"id": str(monitor.pk)})) == 1


def test_holds_commits_reverts_and_refusals_keep_the_sum(tree):
    tree.fund("@alice", 10_000)  # @cash: 100.00
    low = _watch(tree, "@cash", "below", 5_000)
    url = f"{tree.url}/transactions"
    hold = tree.pay(6_000, 0, source="@alice", destination="@fees/platform", pending=True).json()
    assert len(_fired(low)) == 1  # 40.00 available, 60.00 on hold
    canceled = tree.api.post(f"{url}/{hold['id']}/cancel")
    assert canceled.status_code == 201, canceled.content
    assert BalanceMonitor.objects.get(pk=low["id"]).holds is False and len(_fired(low)) == 1
    again = tree.pay(6_000, 0, source="@alice", destination="@fees/platform", pending=True)
    assert len(_fired(low)) == 2
    committed = tree.api.post(f"{url}/{again.json()['id']}/commit")
    assert committed.status_code == 200, committed.content
    assert len(_fired(low)) == 2  # still 40.00 available: no crossing
    _seen_is_the_trees_sum(tree, low)
    reverted = tree.api.post(f"{url}/{again.json()['id']}/revert")
    assert reverted.status_code == 201, reverted.content
    assert BalanceMonitor.objects.get(pk=low["id"]).holds is False  # 100.00 again
    before = BalanceMonitor.objects.get(pk=low["id"]).seen
    assert_error(tree.pay(20_000, 0, source="@alice", destination="@fees/platform"), 422, "0018")
    assert BalanceMonitor.objects.get(pk=low["id"]).seen == before
    assert len(_fired(low)) == 2
    _seen_is_the_trees_sum(tree, low)


def test_an_inactive_tree_monitor_reads_its_tree_again_when_set_active(tree):
    tree.fund("@alice", 10_000)
    low = _watch(tree, "@cash", "below", 5_000)
    url = f"{tree.url}/balance-monitors/{low['id']}"
    assert tree.api.patch(url, {"status": {"code": "INACTIVE"}}).status_code == 200
    tree.pay(6_000, 0, source="@alice", destination="@fees/platform")  # 40.00: unseen
    assert _fired(low) == []
    described = tree.api.patch(url, {"description": "cash low"})
    assert described.status_code == 200, described.content
    assert described.json()["conditionHolds"] is False  # a description reads nothing
    active = tree.api.patch(url, {"status": {"code": "ACTIVE"}}).json()
    assert active["conditionHolds"] is True and active["description"] == "cash low"
    _seen_is_the_trees_sum(tree, low)
    assert _fired(low) == []


def test_a_branch_moved_in_is_watched_and_an_account_deleted_inside_leaves_the_sum(tree):
    tree.fund("@alice", 10_000)
    low = _watch(tree, "@cash", "below", 5_000)
    branch = tree.account("@branch")
    tree.account("@leaf", parentAccountId=branch["id"])
    tree.fund("@leaf", 3_000)
    updates = Event.objects.filter(type="balance_monitor.updated", resource_id=low["id"])
    assert _move(tree, "@branch", "@cash").status_code == 200
    assert _watched(tree, "@branch") and _watched(tree, "@leaf")
    assert updates.count() == 1  # the move made it read its tree again
    _seen_is_the_trees_sum(tree, low)
    tree.pay(3_000, 0, source="@leaf", destination="@alice")  # inside: nothing moves out
    deleted = tree.api.delete(f"{tree.url}/accounts/{tree.accounts['@leaf']['id']}")
    assert deleted.status_code == 204, deleted.content
    _seen_is_the_trees_sum(tree, low)
    tree.pay(8_000, 0, source="@alice", destination="@fees/platform")  # 130 - 80 = 50.00
    assert _fired(low) == []
    tree.pay(1, 0, source="@alice", destination="@fees/platform")
    assert len(_fired(low)) == 1
