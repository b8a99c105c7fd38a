"""The ledger's reports in a real browser: the trial balance shown and its CSV link, and the
journal verified from its page."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from organizations.models import Ledger
from outbox.models import Event
from tests.browser.test_back_office import ARGS, PASSWORD, chromium_or_fail, log_in


@pytest.mark.django_db(transaction=True)
def test_the_trial_balance_and_the_journal_s_verification(live_server, book):
    executable = chromium_or_fail()
    from playwright.sync_api import expect, sync_playwright

    book.fund("@alice", 10_000)
    book.pay(2_500, 100)
    get_user_model().objects.create_superuser("staff", "staff@example.com", PASSWORD)
    ledger = Ledger.objects.get()
    base, shots = live_server.url, os.environ.get("LEDGER_SCREENSHOTS")

    # No ORM below until the browser is closed: Playwright's sync API runs an event loop.
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, headless=True, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            log_in(page, base)
            page.goto(f"{base}/admin/organizations/ledger/{ledger.pk}/dashboard/")
            page.click("#reports-link")
            page.click("#report-form input[type=submit]")
            expect(page.locator("#report-table")).to_contain_text("@alice")
            expect(page.locator("#report-csv")).to_be_visible()
            if shots:
                page.screenshot(path=str(Path(shots) / "trial-balance.png"), full_page=True)
            page.click("#journal-link")
            page.click("#verify")
            expect(page.locator("#verify-result")).to_contain_text("Verified")
            expect(page.locator("#verify-result")).to_contain_text("the books match their journal")
            if shots:
                page.screenshot(path=str(Path(shots) / "journal.png"), full_page=True)
        finally:
            browser.close()

    # reading the reports and verifying the journal wrote nothing: no event names a member of staff
    assert not Event.objects.filter(actor_kind="staff").exists()
