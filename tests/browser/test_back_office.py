"""One real browser through the back office: Playwright drives the system Chromium (headless)
against a live server: log in, open the ledger dashboard, post a payment through the posting
page (preview first), revert it with the transaction action, and watch the balances move.

It skips only when no Chromium executable is found. With ``LEDGER_SCREENSHOTS=<dir>`` it also
saves the screenshots the README shows (``docs/screenshots``).
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from organizations.models import Ledger
from transactions.models import Transaction

CANDIDATES = ("chromium", "chromium-browser", "/usr/lib/chromium/chromium", "google-chrome")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
PASSWORD = "browser-test-password"


def chromium_path() -> str | None:
    for name in (os.environ.get("LEDGER_CHROMIUM"), *CANDIDATES):
        found = name and shutil.which(name)
        if found:
            return found
    return None


def chromium_or_fail() -> str:
    """The browser the back-office tests drive. ``make test`` installs it when it can; a
    missing one fails the test with how to get it (it is not a reason to skip)."""
    executable = chromium_path()
    if executable is None:
        pytest.fail(
            "no Chromium executable found: install the Debian package 'chromium' "
            "(make test does it when it may) or set LEDGER_CHROMIUM to a Chromium binary"
        )
    return executable


def log_in(page, base: str, username: str = "staff") -> None:
    """Log in as ``username`` (the superuser ``staff`` unless named), made by the test before
    the browser starts with the password ``PASSWORD``."""
    page.set_default_timeout(15_000)
    page.goto(f"{base}/admin/login/?next=/admin/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")


def balances(page) -> dict[str, str]:
    rows = page.locator("#balances tbody tr[data-alias]")
    return {
        rows.nth(i).get_attribute("data-alias"): rows.nth(i).locator("td.available").inner_text()
        for i in range(rows.count())
    }


@pytest.mark.django_db(transaction=True)
def test_it_posts_and_reverts_a_payment_in_a_real_browser(live_server, book):
    executable = chromium_or_fail()
    from playwright.sync_api import expect, sync_playwright

    book.fund("@alice", 100_000)
    get_user_model().objects.create_superuser("staff", "staff@example.com", PASSWORD)
    ledger = Ledger.objects.get()
    dashboard = f"{live_server.url}/admin/organizations/ledger/{ledger.pk}/dashboard/"
    shots = os.environ.get("LEDGER_SCREENSHOTS")

    # No ORM below until the browser is closed: Playwright's sync API runs an event loop.
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, headless=True, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            log_in(page, live_server.url)
            expect(page.locator("#site-name")).to_be_visible()

            page.goto(dashboard)
            expect(page.locator("#chart-by-status svg")).to_be_visible()
            # A balance takes the scale of the first amount it sees: untouched ones are at 0.
            assert balances(page) == {
                "@alice": "1000.00 BRL",
                "@bob": "0 BRL",
                "@fees/platform": "0 BRL",
            }

            page.click("#post-link")
            page.select_option("#id_template", "PAYMENT_WITH_FEE")
            page.click("#use-template")
            page.fill("#id_var_amount", "25.00")
            page.fill("#id_var_fee", "1.00")
            page.fill("#id_var_source", "@alice")
            page.fill("#id_var_destination", "@bob")
            page.click("#preview")
            preview = page.locator("#preview-result")
            expect(preview).to_contain_text("nothing was written")
            expect(preview).to_contain_text("974.00")
            if shots:
                Path(shots).mkdir(parents=True, exist_ok=True)
                page.screenshot(path=f"{shots}/posting.png", full_page=True)
            page.fill("#id_reason", "Desk request")
            page.click("#post")
            expect(page.locator("ul.messagelist")).to_contain_text("Posted")
            posted_id = re.search(r"/transaction/([0-9a-f-]{36})/change/", page.url).group(1)
            expect(page.locator("div.field-status")).to_contain_text("SENT")

            page.goto(dashboard)
            assert balances(page) == {
                "@alice": "974.00 BRL",
                "@bob": "25.00 BRL",
                "@fees/platform": "1.00 BRL",
            }
            expect(page.locator("#latest-transactions")).to_contain_text("PAYMENT_WITH_FEE")
            page.click("#run-check")
            expect(page.locator("#check-report")).to_contain_text("check_ledger: OK")
            if shots:
                page.screenshot(path=f"{shots}/dashboard.png", full_page=True)

            page.goto(f"{live_server.url}/admin/transactions/transaction/?ledger={ledger.pk}")
            page.check(f"input[name=_selected_action][value='{posted_id}']")
            page.select_option("select[name=action]", "revert_transactions")
            page.click("button[name=index]")
            # nothing moves yet: what the revert would write, and a reason asked for
            expect(page.locator(f"#preview-{posted_id}")).to_contain_text("974.00 BRL")
            if shots:
                page.fill("textarea[name=reason]", "Posted by mistake")
                page.screenshot(path=f"{shots}/confirm-revert.png", full_page=True)
                page.fill("textarea[name=reason]", "")
            page.click("#confirm")
            expect(page.locator(".errorlist")).to_contain_text("This field is required")
            page.fill("textarea[name=reason]", "Posted by mistake")
            page.click("#confirm")
            expect(page.locator("ul.messagelist")).to_contain_text("reverted by")
            page.goto(f"{live_server.url}/admin/transactions/transaction/{posted_id}/change/")
            expect(page.locator("div.field-reversal_link a")).to_be_visible()
            expect(page.locator("#revert_transactions")).to_have_count(0)

            page.goto(dashboard)
            assert balances(page) == {
                "@alice": "1000.00 BRL",
                "@bob": "0.00 BRL",
                "@fees/platform": "0.00 BRL",
            }
        finally:
            browser.close()

    posted = Transaction.objects.get(pk=posted_id)
    assert Transaction.objects.filter(parent=posted, is_reversal=True, status="SENT").exists()
