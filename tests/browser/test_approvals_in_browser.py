"""Maker and checker, two members of staff in two real browser sessions: the accountant's
posting above the ledger's rule is proposed and moves nothing; the approver approves it with a
reason and the money moves (``transactions.approvals``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from ledgerproject.roles import setup_roles
from organizations.models import Account, Ledger
from tests.browser.test_back_office import ARGS, PASSWORD, chromium_or_fail, log_in
from transactions.models import Approval, ApprovalRule


def _staff(name: str, role: str) -> None:
    user = get_user_model().objects.create_user(name, password=PASSWORD, is_staff=True)
    user.groups.add(Group.objects.get(name=role))


@pytest.mark.django_db(transaction=True)
def test_a_maker_proposes_and_a_checker_approves(live_server, book):
    executable = chromium_or_fail()
    from playwright.sync_api import expect, sync_playwright

    book.fund("@alice", 100_000)
    setup_roles()
    _staff("maria", "accountant")
    _staff("chen", "approver")
    ledger = Ledger.objects.get()
    rule = {"action": "post", "asset_code": "BRL", "above": 5_000, "above_scale": 2}
    ApprovalRule.objects.create(organization_id=ledger.organization_id, ledger=ledger, **rule)
    base, shots = live_server.url, os.environ.get("LEDGER_SCREENSHOTS")

    # No ORM below until the browsers are closed: Playwright's sync API runs an event loop.
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, headless=True, args=ARGS)
        try:
            maker = browser.new_context().new_page()
            log_in(maker, base, "maria")
            maker.goto(f"{base}/admin/organizations/ledger/{ledger.pk}/post/")
            maker.select_option("#id_template", "PAYMENT_WITH_FEE")
            maker.click("#use-template")
            maker.fill("#id_var_amount", "120.00")
            maker.fill("#id_var_fee", "0")
            maker.fill("#id_var_source", "@alice")
            maker.fill("#id_var_destination", "@bob")
            maker.fill("#id_reason", "Supplier invoice 88")
            maker.click("#post")
            expect(maker.locator("ul.messagelist")).to_contain_text("proposed for approval")
            expect(maker.locator("#approve")).to_have_count(0)  # not theirs to decide

            checker = browser.new_context().new_page()
            log_in(checker, base, "chen")
            checker.goto(f"{base}/admin/transactions/approval/")
            checker.click(
                "#result_list tbody tr:first-child th a, #result_list tbody tr:first-child td a"
            )
            expect(checker.locator(".field-summary")).to_contain_text("@alice")
            if shots:
                checker.screenshot(path=str(Path(shots) / "approval.png"), full_page=True)
            checker.click("#approve")
            expect(checker.locator("#proposal")).to_contain_text("Supplier invoice 88")
            checker.fill("#id_reason", "Invoice matches the order")
            checker.click("#confirm")
            expect(checker.locator("ul.messagelist")).to_contain_text("Approved and done")
        finally:
            browser.close()

    approval = Approval.objects.get()
    assert (approval.status, approval.maker_name, approval.checker_name) == (
        "DONE",
        "maria",
        "chen",
    )
    bob = Account.objects.get(alias="@bob")
    assert bob.balance.available == 12_000
