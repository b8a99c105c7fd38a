"""Balance controls through the API: overdraft limits, holds that expire, partial commits."""

from __future__ import annotations

import datetime as dt
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from organizations.models import Balance, Ledger
from tests.conftest import assert_error, soon, wait_until
from transactions import states
from transactions.integrity import ledger_check
from transactions.models import Transaction

PAY = """
(transaction-template v1
  (chart-of-accounts-group-name PAY)
  (code PAY)
  (description "Pay")
  (send BRL $amount|2
    (source (from $source :amount BRL $amount|2)))
  (distribute
    (distribute :remaining (to $destination :remaining))))
"""


def _pay(book, amount, source="@alice", destination="@bob", **body):
    variables = {"amount": amount, "source": source, "destination": destination}
    return book.post({"transactionTypeCode": "PAY", "variables": variables, **body})


def _account_url(book, alias):
    return f"{book.url}/accounts/{book.accounts[alias]['id']}"


def _check(book):
    ledger = Ledger.objects.get(pk=book.url.rsplit("/", 1)[1])
    assert ledger_check(ledger).violations == []


# Overdrafts


def test_it_lets_an_account_go_down_to_minus_its_limit_and_no_further(book):
    book.post_template(PAY)
    carol = book.account("@carol", overdraftLimit={"amount": 500, "scale": 2})
    assert carol["balance"] == {"available": 0, "onHold": 0, "scale": 2}
    assert carol["overdraftLimit"] == {"amount": 500, "scale": 2}
    assert _pay(book, 300, source="@carol").status_code == 201
    body = assert_error(_pay(book, 201, source="@carol"), 422, "0018")
    assert "overdraft" in body["description"]
    assert _pay(book, 200, source="@carol").status_code == 201
    assert book.balance("@carol") == {"available": -500, "onHold": 0, "scale": 2}
    assert _limit(book, "@carol") == {"amount": 500, "scale": 2}
    assert_error(_pay(book, 1, source="@carol"), 422, "0018")
    _check(book)


def test_it_refuses_to_lower_a_limit_below_the_current_overdraft(book):
    book.post_template(PAY)
    book.account("@carol", overdraftLimit={"amount": 10, "scale": 0})
    assert _pay(book, 700, source="@carol").status_code == 201
    url = _account_url(book, "@carol")
    body = assert_error(api_patch(book, url, {"amount": 6, "scale": 0}), 422, "0008")
    assert "overdrawn by 7.00" in body["description"] and "overdraftLimit" in body["fields"]
    response = api_patch(book, url, {"amount": 700, "scale": 2})
    assert response.status_code == 200, response.content
    assert response.json()["overdraftLimit"] == {"amount": 700, "scale": 2}
    assert_error(_pay(book, 1, source="@carol"), 422, "0018")
    _check(book)


def _limit(book, alias):
    return book.api.get(f"{book.url}/accounts", {"alias": alias}).json()[0]["overdraftLimit"]


def api_patch(book, url, limit):
    return book.api.patch(url, {"overdraftLimit": limit})


def test_it_raises_the_balance_scale_for_a_finer_limit_and_replays(book):
    book.post_template(PAY)
    book.account("@carol")
    book.fund("@carol", 100)  # scale 2
    response = api_patch(book, _account_url(book, "@carol"), {"amount": 1005, "scale": 3})
    assert response.status_code == 200, response.content
    assert response.json()["balance"] == {"available": 1000, "onHold": 0, "scale": 3}
    assert response.json()["overdraftLimit"] == {"amount": 1005, "scale": 3}
    assert _pay(book, 200, source="@carol").status_code == 201
    assert book.balance("@carol")["available"] == -1000
    _check(book)


def test_it_refuses_bad_limits(book):
    url = _account_url(book, "@alice")
    assert_error(api_patch(book, url, {"amount": -1, "scale": 2}), 400, "0047")
    assert_error(api_patch(book, url, {"amount": 1, "scale": 19}), 400, "0047")
    assert_error(api_patch(book, url, {"amount": 1}), 400, "0009")  # sent whole, as on create
    assert_error(api_patch(book, url, {"amount": "1", "scale": 0}), 400, "0047")
    external = book.api.get(f"{book.url}/accounts", {"alias": "@external/BRL"}).json()[0]
    assert external["overdraftLimit"] is None
    response = api_patch(book, f"{book.url}/accounts/{external['id']}", {"amount": 1, "scale": 0})
    assert_error(response, 422, "0074")


def test_the_database_refuses_a_balance_below_its_limit(book, books_left_unbalanced):
    book.account("@carol", overdraftLimit={"amount": 5, "scale": 0})
    balance = Balance.objects.get(account_id=book.accounts["@carol"]["id"])
    Balance.objects.filter(pk=balance.pk).update(available=-5)
    try:
        with transaction.atomic():
            Balance.objects.filter(pk=balance.pk).update(available=-6)
        raise AssertionError("the check constraint did not fire")
    except IntegrityError:
        pass


@pytest.mark.postgres
@pytest.mark.skipif(connection.vendor != "postgresql", reason="drops a constraint to corrupt")
def test_check_ledger_reports_a_balance_below_its_limit(book):
    book.account("@carol", overdraftLimit={"amount": 5, "scale": 0})
    ledger = Ledger.objects.get(pk=book.url.rsplit("/", 1)[1])
    with connection.cursor() as cursor:  # rolled back with the test's transaction
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute(
            "ALTER TABLE organizations_balance DROP CONSTRAINT balance_available_within_overdraft"
        )
        # and the rule that a balance is what its last operation left (docs/BOOKS.md)
        cursor.execute("ALTER TABLE organizations_balance DISABLE TRIGGER balance_double_entry")
    Balance.objects.filter(account_id=book.accounts["@carol"]["id"]).update(available=-6)
    assert any("below its limit" in v for v in ledger_check(ledger).violations)


# Expiring holds


def _future(seconds=3600):
    return (timezone.now() + dt.timedelta(seconds=seconds)).isoformat()


def test_it_keeps_expires_at_and_refuses_it_where_it_does_not_belong(book):
    book.post_template(PAY)
    book.fund("@alice", 1_000)
    tx = _pay(book, 100, pending=True, expiresAt=_future())
    assert tx.status_code == 201, tx.content
    assert tx.json()["expiresAt"].startswith(str(timezone.now().year))
    assert_error(_pay(book, 100, expiresAt=_future()), 400, "0047")
    assert_error(_pay(book, 100, pending=True, expiresAt=_future(-10)), 400, "0047")
    assert_error(_pay(book, 100, pending=True, expiresAt="soon"), 400, "0047")


def test_a_commit_after_the_expiry_is_refused_before_the_worker_ran(book):
    book.post_template(PAY)
    book.fund("@alice", 1_000)
    expiry = soon()
    tx = _pay(book, 100, pending=True, expiresAt=expiry.isoformat()).json()
    wait_until(expiry)
    body = assert_error(book.api.post(f"{book.url}/transactions/{tx['id']}/commit"), 422, "0099")
    assert "expired" in body["description"]
    assert book.balance("@alice")["onHold"] == 100


def test_the_worker_cancels_expired_holds_exactly_as_a_cancel(book):
    book.post_template(PAY)
    book.fund("@alice", 1_000)
    expiry = soon()
    due = _pay(book, 100, pending=True, expiresAt=expiry.isoformat()).json()
    later = _pay(book, 50, pending=True, expiresAt=_future()).json()
    wait_until(expiry)
    out = StringIO()
    call_command("expire_holds", "--once", stdout=out)
    assert "expired 1 transaction" in out.getvalue()
    tx = book.api.get(f"{book.url}/transactions/{due['id']}").json()
    assert tx["status"] == "CANCELED"
    reversal = Transaction.objects.get(parent_id=due["id"], is_reversal=True)
    assert [op.effect for op in reversal.operations.all()] == ["RELEASE"]
    assert book.balance("@alice") == {"available": 950, "onHold": 50, "scale": 2}
    assert book.api.get(f"{book.url}/transactions/{later['id']}").json()["status"] == (
        "PRE_APPROVED"
    )
    ledger = Ledger.objects.get(pk=book.url.rsplit("/", 1)[1])
    assert states.expire(ledger=ledger, transaction_id=later["id"]) is None  # not yet due
    _check(book)


# Partial commits


def test_it_commits_part_of_a_hold_and_releases_the_rest(book):
    book.post_template(PAY)
    book.fund("@alice", 1_000)
    tx = _pay(book, 800, pending=True).json()
    response = book.api.post(f"{book.url}/transactions/{tx['id']}/commit", {"amount": 300})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["status"] == "SENT" and body["amount"] == {"amount": 300, "scale": 2}
    effects = [(op["accountAlias"], op["type"], op["effect"], op["amount"]["amount"])
               for op in body["operations"]]  # fmt: skip
    assert effects[1:] == [
        ("@alice", "DEBIT", "SETTLE", 300),
        ("@alice", "CREDIT", "RELEASE", 500),
        ("@bob", "CREDIT", "POST", 300),
    ]
    assert book.balance("@alice")["available"] == 700 and book.balance("@alice")["onHold"] == 0
    assert book.available("@bob") == 300
    _check(book)
    reverted = book.api.post(f"{book.url}/transactions/{tx['id']}/revert")
    assert reverted.status_code == 201
    assert book.available("@alice") == 1_000 and book.available("@bob") == 0
    _check(book)


def test_it_takes_a_partial_amount_at_another_scale_exactly(book):
    book.post_template(PAY)
    book.fund("@alice", 1_000)
    tx = _pay(book, 800, pending=True).json()
    url = f"{book.url}/transactions/{tx['id']}/commit"
    assert_error(book.api.post(url, {"amount": 3001, "scale": 3}), 400, "0047")
    assert_error(book.api.post(url, {"amount": 801}), 422, "0008")
    assert_error(book.api.post(url, {"amount": 0}), 400, "0047")
    assert_error(book.api.post(url, {"scale": 2}), 400, "0009")
    assert_error(book.api.post(url, {"amount": "300"}), 400, "0047")
    assert_error(book.api.post(url, {"amount": 300, "extra": 1}), 400, "0053")
    response = book.api.post(url, {"amount": 3, "scale": 0})
    assert response.status_code == 200, response.content
    assert response.json()["amount"] == {"amount": 300, "scale": 2}


def test_it_refuses_a_partial_commit_of_a_split_transaction(book):
    book.fund("@alice", 5_000)
    tx = book.pay(1_000, 50, pending=True).json()
    url = f"{book.url}/transactions/{tx['id']}/commit"
    body = assert_error(book.api.post(url, {"amount": 500}), 422, "0008")
    assert "ambiguous" in body["description"]
    assert book.api.post(url, {"amount": 1_050}).status_code == 200


def test_a_template_hold_duration_sets_the_expiry_of_a_pending_posting(book):
    book.post_template(
        PAY.replace("(code PAY)", "(code PAY_HELD) (pending true) (hold-duration 600)")
    )
    book.fund("@alice", 1_000)
    variables = {"amount": 100, "source": "@alice", "destination": "@bob"}
    before = timezone.now()
    tx = book.post({"transactionTypeCode": "PAY_HELD", "variables": variables}).json()
    expires = Transaction.objects.get(pk=tx["id"]).expires_at
    assert (
        before + dt.timedelta(seconds=600) <= expires <= timezone.now() + dt.timedelta(seconds=600)
    )
    assert tx["expiresAt"] is not None
    explicit = _future(30)
    tx = book.post(
        {"transactionTypeCode": "PAY_HELD", "variables": variables, "expiresAt": explicit}
    ).json()
    assert Transaction.objects.get(pk=tx["id"]).expires_at.isoformat()[:19] == explicit[:19]
    sent = book.post({"transactionTypeCode": "PAY_HELD", "variables": variables, "pending": False})
    assert sent.json()["expiresAt"] is None


def test_the_overdraft_chart_sums_what_overdrawn_accounts_owe(book):
    book.post_template(PAY)
    book.account("@carol", overdraftLimit={"amount": 10, "scale": 0})
    book.account("@dave", overdraftLimit={"amount": 10, "scale": 0})
    book.fund("@alice", 1_000)
    assert _pay(book, 300, source="@carol").status_code == 201
    assert _pay(book, 150, source="@dave").status_code == 201
    chart = book.api.post(f"{book.url}/charts", {"type": "overdraftByAsset"})
    assert chart.status_code == 200, chart.content
    assert chart.json()["data"] == [{"metric": "BRL", "count": 450, "scale": 2}]
    total = book.api.post(f"{book.url}/charts", {"type": "totalAmountByAsset"}).json()["data"]
    assert total == [{"metric": "BRL", "count": 1_000, "scale": 2}]  # overdrafts net out
