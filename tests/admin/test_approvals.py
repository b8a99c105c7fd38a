"""Maker-checker (``transactions.approvals``): a rule of the ledger sends a manual posting above
an amount, or a revert, to a second person; nothing moves before approval; the maker cannot
decide; approving acts through the engine as the checker, once, or fails with the API's code
if the books changed; every proposal and decision is an event."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from ledgerproject import actors
from organizations.models import Account, Ledger
from outbox.models import Event
from templates_dsl.models import TransactionTemplate
from tests.admin.helpers import change_form, ledger_of, messages_of, save_confirmed
from tests.admin.test_roles import client_of
from transactions import approvals
from transactions.models import Approval, ApprovalRule, Transaction

PAYMENT = {"template": "PAYMENT_WITH_FEE", "var_fee": "0", "var_source": "@alice",
           "var_destination": "@bob"}  # fmt: skip


def _rule(book, action: str, above: int | None = None) -> None:
    ledger = ledger_of(book)
    ApprovalRule.objects.create(organization_id=ledger.organization_id, ledger=ledger,
                                action=action, above=above, above_scale=2)  # fmt: skip


def _post(client, book, amount: str, **extra):
    url = f"/admin/organizations/ledger/{ledger_of(book).pk}/post/"
    body = {**PAYMENT, "var_amount": amount, "_post": "1", "reason": "Invoice 7", **extra}
    return client.post(url, body, follow=True)


def _decide(client, approval: Approval, decision: str, reason: str = "Checked the invoice"):
    url = f"/admin/transactions/approval/{approval.pk}/decide/{decision}/"
    return client.post(url, {"reason": reason}, follow=True)


def test_a_posting_above_the_rule_waits_for_a_second_person(book):
    book.fund("@alice", 100_000)
    _rule(book, "post", above=5_000)  # 50.00 BRL
    maker, checker = client_of("accountant"), client_of("approver")
    _post(maker, book, "25.00")  # below: posted at once
    assert book.available("@bob") == 2_500
    response = _post(maker, book, "100.00")
    assert any("proposed for approval" in m for m in messages_of(response))
    (approval,) = Approval.objects.all()
    assert approval.status == "PENDING" and approval.maker_name == "accountant-user"
    assert "@alice 975.00 BRL → 875.00 BRL" in approval.summary
    assert book.available("@bob") == 2_500  # nothing moved
    assert Event.objects.filter(type="approval.proposed").count() == 1
    # the maker may not decide (no permission; nor would the rule let them)
    assert (
        maker.get(f"/admin/transactions/approval/{approval.pk}/decide/approve/").status_code == 403
    )
    done = _decide(checker, approval, "approve")
    assert any("Approved and done" in m for m in messages_of(done))
    approval.refresh_from_db()
    assert (approval.status, approval.checker_name) == ("DONE", "approver-user")
    tx = Transaction.objects.get(pk=approval.transaction_id)
    assert (tx.amount, tx.actor_name) == (10_000, "approver-user")
    assert book.available("@bob") == 12_500
    posted = Event.objects.get(type="transaction.posted", resource_id=tx.pk)
    assert posted.reason == "Invoice 7"  # the maker's reason, on what moved the money
    approved = Event.objects.get(type="approval.approved")
    assert approved.data["checker"]["reason"] == "Checked the invoice"
    assert approved.data["transactionId"] == str(tx.pk)


def test_the_maker_cannot_approve_even_with_the_permission(admin_client, book):
    book.fund("@alice", 100_000)
    _rule(book, "post")
    _post(admin_client, book, "1.00")
    approval = Approval.objects.get()
    page = admin_client.get(f"/admin/transactions/approval/{approval.pk}/change/")
    assert 'id="approve"' not in page.content.decode()  # not offered to its maker
    refused = _decide(admin_client, approval, "approve")
    assert "0008: Who proposed a change cannot also decide it." in refused.content.decode()
    assert Approval.objects.get().status == "PENDING"
    with pytest.raises(IntegrityError), transaction.atomic():  # the database refuses it too
        Approval.objects.filter(pk=approval.pk).update(checker_id=approval.maker_id)


def test_a_rejection_moves_nothing(book):
    book.fund("@alice", 100_000)
    _rule(book, "post")
    _post(client_of("accountant"), book, "10.00")
    approval = Approval.objects.get()
    _decide(client_of("approver"), approval, "reject", "Not ours")
    approval.refresh_from_db()
    assert (approval.status, approval.checker_reason, approval.transaction_id) == (
        "REJECTED", "Not ours", None
    )  # fmt: skip
    assert book.available("@bob") == 0
    assert Event.objects.filter(type="approval.rejected").count() == 1


def test_an_approval_the_books_no_longer_allow_fails_with_the_api_s_code(book):
    book.fund("@alice", 10_000)
    _rule(book, "post")
    _post(client_of("accountant"), book, "80.00")
    book.pay(5_000, 0)  # meanwhile @alice spends: 80.00 no longer fits
    approval = Approval.objects.get()
    failed = _decide(client_of("approver"), approval, "approve")
    assert any("refused now: 0018" in m for m in messages_of(failed))
    approval.refresh_from_db()
    assert approval.status == "FAILED" and approval.error["code"] == "0018"
    assert Event.objects.filter(type="approval.failed").count() == 1
    assert book.available("@alice") == 5_000


def test_an_approval_is_done_once(book):
    book.fund("@alice", 100_000)
    _rule(book, "post")
    _post(client_of("accountant"), book, "10.00")
    approval = Approval.objects.get()
    _decide(client_of("approver"), approval, "approve")
    second = client_of("administrator")
    again = _decide(second, approval, "approve")
    assert "This was decided already: DONE" in again.content.decode()
    # the service itself: a second approval is rolled back with its posting
    with actors.working(actors.Work(actors.Actor("staff", "other", "999"))):
        assert approvals.approve(approval, reason="again").status == "DONE"
    assert Transaction.objects.filter(type="PAYMENT_WITH_FEE").count() == 1
    assert Event.objects.filter(type="approval.approved").count() == 1


def test_a_revert_under_the_rule_is_proposed_and_done_on_approval(book):
    book.fund("@alice", 100_000)
    sent = book.pay(2_500, 0).json()
    _rule(book, "revert")
    maker = client_of("accountant")
    act = f"/admin/transactions/transaction/{sent['id']}/act/revert/"
    assert 'id="proposed"' in maker.get(act).content.decode()  # said before confirming
    response = maker.post(act, {"_confirm": "1", "reason": "Duplicate"}, follow=True)
    assert any("needs a second person" in m for m in messages_of(response))
    assert not Transaction.objects.filter(parent_id=sent["id"]).exists()
    again = maker.post(act, {"_confirm": "1", "reason": "Duplicate"}, follow=True)
    assert any("waits for approval" in m for m in messages_of(again))  # one proposal
    approval = Approval.objects.get()
    assert approval.action == "revert" and approval.request == {"transaction_id": sent["id"]}
    _decide(client_of("approver"), approval, "approve")
    reversal = Transaction.objects.get(parent_id=sent["id"], is_reversal=True)
    assert Approval.objects.get().transaction_id == reversal.pk
    assert book.available("@alice") == 100_000


def test_a_posting_that_needs_approval_cannot_be_scheduled(book):
    book.fund("@alice", 100_000)
    _rule(book, "post")
    response = _post(client_of("accountant"), book, "1.00", scheduled_for="2099-01-01T00:00")
    assert "cannot be scheduled" in response.content.decode()
    assert not Approval.objects.exists()


def test_the_api_is_not_held_by_the_back_office_s_rules(book):
    book.fund("@alice", 100_000)
    _rule(book, "post")
    assert book.pay(10_000, 0).status_code == 201


def test_an_overdraft_limit_above_the_rule_is_proposed_then_set_on_approval(book):
    _rule(book, "limit", above=10_000)  # 100.00 BRL
    maker = client_of("accountant")
    bob = Account.objects.get(alias="@bob")
    url, data, _ = change_form(maker, "organizations/account", bob)
    low = save_confirmed(maker, url, {**data, "overdraft_limit": "50.00", "reason": "Agreed"})
    assert low.status_code == 302 and not Approval.objects.exists()  # below: set at once
    url, data, _ = change_form(maker, "organizations/account", bob)
    high = save_confirmed(maker, url, {**data, "overdraft_limit": "500.00", "reason": "VIP"})
    approval = Approval.objects.get()
    assert high.status_code == 302 and high["Location"].endswith(f"/approval/{approval.pk}/change/")
    assert "minus 500.00 BRL" in approval.summary
    bob.balance.refresh_from_db()
    assert (bob.balance.overdraft_limit, bob.balance.scale) == (5_000, 2)  # still 50.00
    _decide(client_of("approver"), approval, "approve")
    assert Approval.objects.get().status == "DONE"
    bob.balance.refresh_from_db()
    assert bob.balance.overdraft_limit == 50_000
    changed = Event.objects.filter(type="account.updated").latest("seq")
    assert (changed.reason, changed.actor_name) == ("VIP", "approver-user")


def test_reopening_a_period_is_proposed_then_done_on_approval(admin_client, book):
    ledger = ledger_of(book)
    through = timezone.now().date() - dt.timedelta(days=3)
    Ledger.objects.filter(pk=ledger.pk).update(closed_through=through)
    _rule(book, "reopen")
    url, data, _ = change_form(admin_client, "organizations/ledger", ledger)
    response = save_confirmed(admin_client, url, {**data, "closed_through": "", "reason": "Audit"})
    assert response.status_code == 302 and Approval.objects.get().action == "reopen"
    assert Ledger.objects.get(pk=ledger.pk).closed_through == through  # still closed
    # closing further needs no approval
    later = (through + dt.timedelta(days=1)).isoformat()
    url, data, _ = change_form(admin_client, "organizations/ledger", ledger)
    closed = save_confirmed(admin_client, url, {**data, "closed_through": later, "reason": "Close"})
    assert closed.status_code == 302 and Approval.objects.count() == 1
    _decide(client_of("approver"), Approval.objects.get(), "approve")
    assert Approval.objects.get().status == "DONE"
    assert Ledger.objects.get(pk=ledger.pk).closed_through is None


def test_a_reopening_rule_names_no_asset_nor_amount(admin_client, book):
    ledger = ledger_of(book)
    response = admin_client.post(
        "/admin/transactions/approvalrule/add/",
        {"ledger": ledger.pk, "action": "reopen", "asset_code": "BRL", "above_scale": "0"},
    )
    assert "names neither an asset nor an amount" in response.content.decode()
    assert not ApprovalRule.objects.exists()


def test_an_approval_refuses_a_posting_whose_template_changed_since(book):
    book.fund("@alice", 100_000)
    _rule(book, "post")
    _post(client_of("accountant"), book, "10.00")
    # meanwhile someone edits the template: what was approved is not what would post
    changed = TransactionTemplate.objects.get(code="PAYMENT_WITH_FEE")
    TransactionTemplate.objects.filter(pk=changed.pk).update(text=changed.text + "\n")
    failed = _decide(client_of("approver"), Approval.objects.get(), "approve")
    assert any("template PAYMENT_WITH_FEE changed" in m for m in messages_of(failed))
    assert Approval.objects.get().status == "FAILED"
    assert not Transaction.objects.filter(type="PAYMENT_WITH_FEE").exists()


def test_who_changed_a_ledger_s_rules_is_in_the_audit_trail(admin_client, book):
    ledger = ledger_of(book)
    added = admin_client.post(
        "/admin/transactions/approvalrule/add/",
        {"ledger": ledger.pk, "action": "post", "asset_code": "BRL", "above": "5000",
         "above_scale": "2"},
    )  # fmt: skip
    assert added.status_code == 302
    rule = ApprovalRule.objects.get()
    deleted = admin_client.post(
        f"/admin/transactions/approvalrule/{rule.pk}/delete/", {"post": "yes"}
    )
    assert deleted.status_code == 302 and not ApprovalRule.objects.exists()
    trail = list(Event.objects.filter(type__startswith="approval_rule.").order_by("seq"))
    assert [e.type for e in trail] == ["approval_rule.created", "approval_rule.deleted"]
    assert trail[0].data["above"] == {"amount": 5000, "scale": 2}
    assert {(e.actor_kind, e.ledger_id) for e in trail} == {("staff", ledger.pk)}


def test_a_list_revert_reads_the_rules_once_whatever_it_selects(admin_client, book):
    book.fund("@alice", 100_000)
    sent = [book.pay(100 + n, 0).json()["id"] for n in range(5)]
    _rule(book, "revert")

    def rule_reads(ids: list[str]) -> int:
        with CaptureQueriesContext(connection) as seen:
            _confirmed(admin_client, ids)
        return sum("approvalrule" in q["sql"] for q in seen.captured_queries)

    assert rule_reads(sent[:1]) == rule_reads(sent[1:]) == 2  # the preview's, the confirm's
    assert Approval.objects.filter(action="revert").count() == 5


def _confirmed(client, ids: list[str]):
    page = "/admin/transactions/transaction/"
    client.post(page, {"action": "revert_transactions", "_selected_action": ids})
    body = {"action": "revert_transactions", "_selected_action": ids, "_confirm": "1",
            "reason": "Duplicates"}  # fmt: skip
    return client.post(page, body)
