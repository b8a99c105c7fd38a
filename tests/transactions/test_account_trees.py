"""The account tree (docs/ACCOUNT-TREES.md): an account names a parent account of its ledger,
may move with everything under it, never under itself and never deeper than ten levels; its
rolled-up balance is its own plus all its descendants', per asset, exactly, now and effective
at a past time, and a list can show it for a whole page."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.utils import timezone

from ledgerproject.formats import render_timestamp
from organizations import contents
from organizations.account_tree import MAX_DEPTH
from organizations.models import Account, Balance, Ledger
from tests.admin.helpers import staff_client
from tests.conftest import assert_error
from tests.organizations.helpers import other_ledger_url, other_organization  # noqa: F401
from tests.transactions.test_effective_dates import _next_whole_second
from transactions.integrity import ledger_check

pytestmark = pytest.mark.django_db

BIG = 10**37 + 7  # 38 digits


def _move(book, alias: str, parent: str | None):
    parent_id = book.accounts[parent]["id"] if parent else None
    url = f"{book.url}/accounts/{book.accounts[alias]['id']}"
    return book.api.patch(url, {"parentAccountId": parent_id})


def _rolled_up(book, alias: str, **query) -> list[dict]:
    url = f"{book.url}/accounts/{book.accounts[alias]['id']}/rolled-up-balance"
    response = book.api.get(url, query)
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["accountId"] == book.accounts[alias]["id"]
    assert body["alias"] == alias
    return body["balances"]


def _brl(available: int, on_hold: int = 0, scale: int = 2) -> list[dict]:
    return [{"assetCode": "BRL", "available": available, "onHold": on_hold, "scale": scale}]


def test_a_rolled_up_balance_is_the_account_and_everything_under_it(tree):
    tree.fund("@alice", 1_000)
    tree.fund("@bob", 250)
    assert tree.pay(100, 5).status_code == 201  # @alice pays @bob 100 and @fees/platform 5
    assert _rolled_up(tree, "@cash") == _brl(1_000 + 250 - 5)
    assert _rolled_up(tree, "@assets") == _brl(1_250)
    assert _rolled_up(tree, "@alice") == _brl(895)
    fresh = tree.account("@empty")
    assert fresh["parentAccountId"] is None
    assert _rolled_up(tree, "@empty") == _brl(0, scale=0)


def test_a_move_takes_the_subtree_along(tree):
    tree.fund("@alice", 700)
    tree.account("@liabilities")
    moved = _move(tree, "@cash", "@liabilities")
    assert moved.status_code == 200, moved.content
    assert moved.json()["parentAccountId"] == tree.accounts["@liabilities"]["id"]
    assert _rolled_up(tree, "@liabilities") == _brl(700)
    assert _rolled_up(tree, "@assets") == _brl(0, scale=0)
    assert _move(tree, "@cash", None).json()["parentAccountId"] is None
    assert _rolled_up(tree, "@liabilities") == _brl(0, scale=0)


def test_no_account_goes_under_itself(tree):
    for alias, under in (("@assets", "@assets"), ("@assets", "@cash"), ("@cash", "@alice")):
        error = assert_error(_move(tree, alias, under), 422, "0008")
        assert error["fields"] == {"parentAccountId": "would make a cycle"}
    assert (
        tree.api.get(f"{tree.url}/accounts/{tree.accounts['@cash']['id']}").json()[
            "parentAccountId"
        ]
        == tree.accounts["@assets"]["id"]
    )


def test_the_tree_is_at_most_ten_levels_deep(book):
    chain = [book.account("@level1")]
    for level in range(2, MAX_DEPTH + 1):
        chain.append(book.account(f"@level{level}", parentAccountId=chain[-1]["id"]))
    too_deep = book.api.post(
        f"{book.url}/accounts",
        {"assetCode": "BRL", "alias": "@level11", "parentAccountId": chain[-1]["id"]},
    )
    assert assert_error(too_deep, 422, "0008")["fields"] == {
        "parentAccountId": f"deeper than {MAX_DEPTH} levels"
    }
    # A branch of two levels fits under level 8, not under level 9.
    book.account("@branch")
    book.account("@leaf", parentAccountId=book.accounts["@branch"]["id"])
    assert_error(_move(book, "@branch", "@level9"), 422, "0008")
    assert _move(book, "@branch", "@level8").status_code == 200


def test_an_account_with_active_children_is_not_deleted(tree):
    url = f"{tree.url}/accounts/{tree.accounts['@cash']['id']}"
    assert_error(tree.api.delete(url), 422, "0008")
    for alias in ("@alice", "@bob"):
        assert _move(tree, alias, None).status_code == 200
    assert tree.api.delete(url).status_code == 204
    # A deleted account is no parent.
    response = tree.api.post(
        f"{tree.url}/accounts",
        {"assetCode": "BRL", "parentAccountId": tree.accounts["@cash"]["id"]},
    )
    assert_error(response, 422, "0008")


def test_an_update_keeps_a_move_made_since_the_account_was_read(tree):
    """The API reads the account, then updates it: the row it saves carries the parent as it
    is under the tree lock, not as it was read."""
    stale = Account.objects.get(pk=tree.accounts["@alice"]["id"])
    assert _move(tree, "@alice", "@assets").status_code == 200
    contents.account_update(account=stale, data={"name": "Alice"})
    stored = Account.objects.get(pk=stale.pk)
    assert (stored.name, str(stored.parent_account_id)) == ("Alice", tree.accounts["@assets"]["id"])


def test_rolled_up_balances_are_exact_per_asset_at_each_assets_largest_scale(
    tree, books_left_unbalanced
):
    created = tree.api.post(
        f"{tree.url}/instruments", {"name": "Dollar", "type": "currency", "code": "USD"}
    )
    assert created.status_code == 201, created.content
    dollars = tree.account(
        "@dollars", assetCode="USD", parentAccountId=tree.accounts["@cash"]["id"]
    )
    cents = tree.account("@cents", assetCode="USD", parentAccountId=dollars["id"])
    rows = {
        tree.accounts["@alice"]["id"]: (BIG, 3, 2),
        tree.accounts["@bob"]["id"]: (BIG, 1, 0),
        dollars["id"]: (5, 0, 0),
        cents["id"]: (BIG, BIG, 4),
    }
    for account_id, (available, on_hold, scale) in rows.items():
        Balance.objects.filter(account_id=account_id).update(
            available=available, on_hold=on_hold, scale=scale
        )
    assert _rolled_up(tree, "@cash") == [
        {"assetCode": "BRL", "available": BIG + BIG * 100, "onHold": 3 + 100, "scale": 2},
        {"assetCode": "USD", "available": 5 * 10**4 + BIG, "onHold": BIG, "scale": 4},
    ]
    listed = tree.api.get(f"{tree.url}/accounts", {"rolledUp": "true", "alias": "@cash"}).json()
    assert listed[0]["rolledUpBalances"] == _rolled_up(tree, "@cash")


def test_a_rolled_up_balance_at_a_past_time_counts_what_was_effective_then(tree):
    tree.fund("@alice", 1_000)
    at = _next_whole_second()  # times are answered to the second
    later = tree.fund("@bob", 300)
    backdated = tree.post(
        {
            "transactionTypeCode": "FUND",
            "variables": {"amount": 40, "account": "@alice"},
            "effectiveAt": render_timestamp(at - dt.timedelta(days=1)),
        }
    )
    assert backdated.status_code == 201, backdated.content
    assert _rolled_up(tree, "@cash", at=render_timestamp(at)) == _brl(1_040)
    assert _rolled_up(tree, "@assets", at=render_timestamp(at)) == _brl(1_040)
    # Each part agrees with the account's own balance effective then; @bob had no operation
    # by then, and so no asset to answer (his own balance answers zero).
    own = {
        alias: tree.api.get(
            f"{tree.url}/accounts/{tree.accounts[alias]['id']}/balance",
            {"at": render_timestamp(at)},
        ).json()
        for alias in ("@alice", "@bob")
    }
    assert _rolled_up(tree, "@alice", at=render_timestamp(at)) == _brl(
        own["@alice"]["available"], own["@alice"]["onHold"], own["@alice"]["scale"]
    )
    assert _rolled_up(tree, "@bob", at=render_timestamp(at)) == []
    assert own["@bob"]["available"] == own["@bob"]["onHold"] == 0
    assert _rolled_up(tree, "@cash", at=render_timestamp(at - dt.timedelta(days=3))) == []
    assert later["createdAt"] >= render_timestamp(at)
    assert _rolled_up(tree, "@cash", at=render_timestamp(_next_whole_second())) == _brl(1_340)
    assert _rolled_up(tree, "@cash") == _brl(1_340)


def test_the_list_shows_rolled_up_balances_only_when_asked(tree):
    tree.fund("@alice", 10)
    tree.fund("@bob", 20)
    plain = tree.api.get(f"{tree.url}/accounts").json()
    assert all("rolledUpBalances" not in row for row in plain)
    rolled = tree.api.get(f"{tree.url}/accounts", {"rolledUp": "true", "limit": 100}).json()
    by_alias = {row["alias"]: row["rolledUpBalances"] for row in rolled}
    assert by_alias["@cash"] == by_alias["@assets"] == _brl(30)
    assert by_alias["@alice"] == _brl(10)
    children = tree.api.get(
        f"{tree.url}/accounts", {"parentAccountId": tree.accounts["@cash"]["id"]}
    ).json()
    assert sorted(row["alias"] for row in children) == ["@alice", "@bob"]


def test_bad_questions_get_clear_errors(tree, other_ledger_url):  # noqa: F811
    url = f"{tree.url}/accounts/{tree.accounts['@cash']['id']}/rolled-up-balance"
    assert_error(tree.api.get(url, {"at": "yesterday"}), 400, "0077")
    assert_error(tree.api.get(url, {"asOf": "2026-01-01"}), 400, "0082")
    assert_error(tree.api.get(f"{tree.url}/accounts", {"rolledUp": "maybe"}), 400, "0082")
    foreign = f"{other_ledger_url}/accounts/{tree.accounts['@cash']['id']}/rolled-up-balance"
    assert_error(tree.api.get(foreign), 404, "0007")


def test_the_admin_shows_the_chart_of_accounts_with_rolled_up_balances(tree):
    tree.fund("@alice", 1_234)
    ledger = Ledger.objects.get()
    url = f"/admin/organizations/ledger/{ledger.pk}/chart-of-accounts/"
    clerk = staff_client("organizations.view_ledger", "organizations.view_account")
    page = clerk.get(url)
    assert page.status_code == 200
    rows = re.findall(
        r'<tr data-depth="(\d)">.*?>(@[^<]+)</a>.*?class="num">([^<]*)<',
        page.content.decode(),
        re.S,
    )
    assert rows == [
        ("0", "@assets", "12.34 BRL"),
        ("1", "@cash", "12.34 BRL"),
        ("2", "@alice", "12.34 BRL"),
        ("2", "@bob", "0 BRL"),
        ("1", "@fees/platform", "0 BRL"),
    ]
    yesterday = (timezone.now() - dt.timedelta(days=1)).date().isoformat()
    earlier = clerk.get(url, {"at": yesterday}).content.decode()
    assert "12.34 BRL" not in earlier and "effective at" in earlier
    nobody = staff_client("organizations.view_ledger", username="viewer")
    assert nobody.get(url).status_code == 403


def test_staff_move_an_account_on_its_admin_page_under_the_same_rules(tree):
    admin = staff_client("organizations.view_account", "organizations.change_account")
    alice = Account.objects.get(alias="@alice")
    url = f"/admin/organizations/account/{alice.pk}/change/"
    form = admin.get(url).context["adminform"].form
    data = {name: form[name].value() or "" for name in form.fields}
    data["parent_account"] = str(tree.accounts["@fees/platform"]["id"])
    moved = admin.post(url, data)
    assert moved.status_code == 302, moved.content.decode()[-2000:]
    alice.refresh_from_db()
    assert str(alice.parent_account_id) == tree.accounts["@fees/platform"]["id"]
    assets = Account.objects.get(alias="@assets")
    cycle = admin.post(
        f"/admin/organizations/account/{assets.pk}/change/",
        {**data, "name": "@assets", "parent_account": str(alice.pk)},
    )
    assert cycle.status_code == 200 and "descendant of itself" in cycle.content.decode()
    assets.refresh_from_db()
    assert assets.parent_account_id is None


MICRO = """(transaction-template v1 (chart-of-accounts-group-name G) (code MICRO)
  (send BRL $amount|4 (source (from @alice :amount BRL $amount|4 (chart-of-accounts D))))
  (distribute (to @bob :amount BRL $amount|4 (chart-of-accounts C))))"""


def test_a_past_rolled_up_balance_counts_holds_and_larger_scales_as_each_account_does(tree):
    """Holds (on hold, then settled or released), an operation at a larger scale than the
    balance had, backdated ones: each account's part is its own balance effective then, and
    @cash is their sum."""
    tree.post_template(MICRO)
    tree.fund("@alice", 50_000)
    held = tree.post(
        {"transactionTypeCode": "PAYMENT_HELD",
         "variables": {"amount": 1_000, "fee": 10, "source": "@alice", "destination": "@bob"}}
    )  # fmt: skip
    assert held.status_code == 201, held.content
    at = _next_whole_second()
    assert tree.api.post(f"{tree.url}/transactions/{held.json()['id']}/commit").status_code == 200
    micro = tree.post(
        {"transactionTypeCode": "MICRO", "variables": {"amount": 12_345},
         "effectiveAt": render_timestamp(at - dt.timedelta(hours=1))}
    )  # fmt: skip
    assert micro.status_code == 201, micro.content
    later = _next_whole_second()
    for when in (at, later):
        own = {}
        for alias in ("@alice", "@bob"):
            url = f"{tree.url}/accounts/{tree.accounts[alias]['id']}/balance"
            body = tree.api.get(url, {"at": render_timestamp(when)}).json()
            own[alias] = body
            assert _rolled_up(tree, alias, at=render_timestamp(when)) == _brl(
                body["available"], body["onHold"], body["scale"]
            )
        scale = max(body["scale"] for body in own.values())
        total = {
            key: sum(b[key] * 10 ** (scale - b["scale"]) for b in own.values())
            for key in ("available", "onHold")
        }
        assert _rolled_up(tree, "@cash", at=render_timestamp(when)) == _brl(
            total["available"], total["onHold"], scale
        )
    # Effective at ``at``: the hold (still on hold then) and the backdated micro-payment.
    assert _rolled_up(tree, "@alice", at=render_timestamp(at)) == _brl(
        5_000_000 - 101_000 - 12_345, 101_000, 4
    )


def test_check_ledger_names_what_breaks_the_tree_s_rules(tree, books_left_unbalanced):
    """Written past the service (as a tree made before the rules could be): a branch too deep,
    an external parent, a cycle."""
    chain = [tree.accounts["@alice"]["id"]]
    for level in range(MAX_DEPTH):
        chain.append(tree.account(f"@deep{level}")["id"])
        Account.objects.filter(pk=chain[-1]).update(parent_account_id=chain[-2])
    external = Account.objects.get(alias="@external/BRL")
    Account.objects.filter(alias="@fees/platform").update(parent_account_id=external.pk)
    ledger = Ledger.objects.get()
    problems = {
        v.split("account ")[1].split(" ")[0]: v.split(": ", 2)[2]
        for v in ledger_check(ledger).violations
        if "account @" in v
    }
    assert problems == {
        "@fees/platform": "its parent is an external account",
        "@deep7": f"11 levels deep, more than {MAX_DEPTH}",
        "@deep8": f"12 levels deep, more than {MAX_DEPTH}",
        "@deep9": f"13 levels deep, more than {MAX_DEPTH}",
    }
    Account.objects.filter(alias="@assets").update(parent_account_id=tree.accounts["@cash"]["id"])
    cycle = [v for v in ledger_check(ledger).violations if "(a cycle)" in v]
    assert {v.split("account ")[1].split(" ")[0] for v in cycle} >= {"@assets", "@cash"}
