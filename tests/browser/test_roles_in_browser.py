"""A member of staff with a ready-made role (``ledgerproject.roles``) in a real browser: a
viewer's index lists the books but no internal record, a transaction's page shows its
operations, and nothing on it moves money."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from ledgerproject.roles import setup_roles
from outbox.models import Event
from tests.browser.test_back_office import ARGS, PASSWORD, chromium_or_fail, log_in

INTERNAL = (
    "organizations/apitoken",
    "transactions/idempotencykey",
    "outbox/delivery",
    "outbox/webhooksubscription",
    "transactions/operation",
)


@pytest.mark.django_db(transaction=True)
def test_a_viewer_reads_the_books_and_no_internal_record(live_server, book):
    executable = chromium_or_fail()
    from playwright.sync_api import expect, sync_playwright

    book.fund("@alice", 10_000)
    sent = book.pay(100, 1).json()
    setup_roles()
    viewer = get_user_model().objects.create_user("vera", password=PASSWORD, is_staff=True)
    viewer.groups.add(Group.objects.get(name="viewer"))
    base = live_server.url
    shots = os.environ.get("LEDGER_SCREENSHOTS")

    # No ORM below until the browser is closed: Playwright's sync API runs an event loop.
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, headless=True, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            log_in(page, base, "vera")
            listed = "#content-main a[href='/admin/{}/']"
            expect(page.locator(listed.format("transactions/transaction")).first).to_be_visible()
            for internal in INTERNAL:
                expect(page.locator(listed.format(internal))).to_have_count(0)

            # The lists by task, only those a viewer may see.
            sections = page.locator("#content-main caption a.section")
            expect(sections).to_have_text(["Ledgers", "Accounts", "Transactions"])
            if shots:
                page.screenshot(path=str(Path(shots) / "index-viewer.png"), full_page=True)

            # One box on every page searches every list the viewer may see.
            page.fill("#global-search-q", "@bob")
            page.press("#global-search-q", "Enter")
            expect(page.locator(".search-section caption")).to_have_text(
                ["Accounts", "Transactions", "Ledgers", "Organizations"]
            )
            expect(page.locator("#search-1")).to_contain_text("@bob")
            expect(page.locator("#search-2 a[href*='/change/']")).to_have_count(1)
            if shots:
                page.screenshot(path=str(Path(shots) / "search.png"), full_page=True)

            page.goto(f"{base}/admin/transactions/transaction/{sent['id']}/change/")
            operations = page.locator(".inline-related tbody tr:has(td)")
            expect(operations.first).to_be_visible()
            expect(page.locator(".inline-related")).to_contain_text("@bob")
            expect(page.get_by_role("link", name="Revert", exact=True)).to_have_count(0)

            page.goto(f"{base}/admin/transactions/idempotencykey/")
            expect(page.locator("body")).to_contain_text("403")
        finally:
            browser.close()

    # a viewer's morning wrote nothing: no event names a member of staff
    assert not Event.objects.filter(actor_kind="staff").exists()
