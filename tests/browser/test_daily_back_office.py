"""A clerk's morning in a real browser (Playwright driving the system Chromium): create an
account from the ledger's account list, post to it with a decimal amount, find the transaction
by the account's alias, export the list as CSV, and see a broken template's error line marked
in the editor."""

from __future__ import annotations

import csv
import io
import os
import re
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from organizations.models import Account, Ledger
from tests.api.test_templates import SIMPLE
from tests.browser.test_back_office import ARGS, PASSWORD, chromium_or_fail, log_in
from transactions.models import Transaction


def add_form_ready(page) -> None:
    """Wait for the admin's add form to have run its scripts.

    Django's ``change_form.js`` loads ``async`` and focuses the form's first field whenever it
    runs; a ``fill`` of another field before then can have its text typed into that field. An
    async script runs before the page's ``load`` event."""
    page.wait_for_load_state("load")


@pytest.mark.django_db(transaction=True)
def test_a_clerks_morning_in_a_real_browser(live_server, book, tmp_path: Path):
    executable = chromium_or_fail()
    from playwright.sync_api import expect, sync_playwright

    book.fund("@alice", 100_000)
    get_user_model().objects.create_superuser("staff", "staff@example.com", PASSWORD)
    ledger = Ledger.objects.get()
    ledger_name = ledger.name
    base = live_server.url
    shots = os.environ.get("LEDGER_SCREENSHOTS")

    # No ORM below until the browser is closed: Playwright's sync API runs an event loop.
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, headless=True, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900}, accept_downloads=True)
            log_in(page, base)
            expect(page.locator("#site-name")).to_contain_text("Ledger back office")
            # The ledger's dashboard is one click from the index.
            page.click(f"#ledger-dashboards a[href$='/{ledger.pk}/dashboard/']")
            expect(page.locator("#chart-by-status svg")).to_be_visible()

            # Create an account from the ledger's account list: the ledger is already chosen.
            page.goto(f"{base}/admin/organizations/account/?ledger={ledger.pk}")
            page.click(".object-tools a.addlink")
            expect(page.locator("#id_ledger")).to_have_value(str(ledger.pk))
            add_form_ready(page)
            page.fill("#id_name", "Carol")
            page.fill("#id_alias", "@carol")
            page.fill("#id_asset_code", "BRL")
            page.click("input[name=_save]")
            expect(page.locator("ul.messagelist")).to_contain_text("was added successfully")

            # Post 12.34 BRL to it, typed as a decimal.
            page.goto(f"{base}/admin/organizations/ledger/{ledger.pk}/post/")
            page.select_option("#id_template", "PAYMENT_WITH_FEE")
            page.click("#use-template")
            page.fill("#id_var_amount", "12.34")
            page.fill("#id_var_fee", "0.66")
            page.fill("#id_var_source", "@alice")
            page.fill("#id_var_destination", "@carol")
            page.fill("#id_reason", "Desk request")
            page.click("#post")
            expect(page.locator("ul.messagelist")).to_contain_text("13.00 BRL")

            # Find it by the alias, and export what the list shows.
            page.goto(f"{base}/admin/transactions/transaction/")
            page.fill("#searchbar", "@carol")
            page.press("#searchbar", "Enter")
            ids = page.locator("code.ledger-id")
            expect(ids).to_have_count(1)
            found = ids.first.inner_text()
            with page.expect_download() as download:
                page.click("a.export-csv")
            exported = tmp_path / "transactions.csv"
            download.value.save_as(exported)

            # Carol's page: her balance, this month's statement; then freeze her account.
            page.goto(f"{base}/admin/organizations/account/?q=%40carol")
            page.click("a:text('account page')")
            expect(page.locator("#balance-available")).to_have_text("12.34 BRL")
            expect(page.locator("#statement td.running")).to_have_text(["12.34 BRL"])
            expect(page.locator("#closing")).to_contain_text("12.34 BRL")
            if shots:
                page.screenshot(path=str(Path(shots) / "account-page.png"), full_page=True)
            page.click("#freeze")
            expect(page.locator("#what")).to_contain_text("neither sends nor receives")
            page.fill("#id_reason", "Card reported stolen")
            page.click("#confirm")
            expect(page.locator("#account-status")).to_contain_text("FROZEN")
            expect(page.locator("#unfreeze")).to_be_visible()

            # A broken template: the editor numbers the lines and marks the failing one. Its
            # ledger is chosen by name from a list, not pasted as an id.
            page.goto(f"{base}/admin/templates_dsl/transactiontemplate/add/")
            add_form_ready(page)
            page.click("#id_ledger + .select2 .select2-selection")
            page.fill(".select2-search__field", ledger_name)
            page.click(f".select2-results__option:has-text('{ledger_name}')")
            expect(page.locator("#id_ledger")).to_have_value(str(ledger.pk))
            # An example to start from, checked as it lands; then a mistake, marked as typed.
            page.select_option("#id_text_example", "fund")
            expect(page.locator("#id_text")).to_have_value(re.compile(r"\(code FUND\)"))
            expect(page.locator(".template-editor-live")).to_contain_text("FUND: valid")
            page.fill("#id_text", SIMPLE.replace("(code SIMPLE)", "(code"))
            expect(page.locator(".template-editor-live")).to_contain_text("0017: line 4")
            expect(page.locator(".template-editor-gutter span.error")).to_have_text("4")
            if shots:
                page.screenshot(path=str(Path(shots) / "template-editor.png"), full_page=True)
            page.click("input[name=_save]")
            marked = page.locator(".template-editor-gutter span.error")
            expect(marked).to_have_text("4")
            expect(page.locator(".template-editor-gutter span")).to_have_count(
                len(SIMPLE.splitlines())
            )
        finally:
            browser.close()

    rows = list(csv.DictReader(io.StringIO(exported.read_text())))
    assert [(row["id"], row["amount"], row["asset_code"]) for row in rows] == [
        (found, "13.00", "BRL")
    ]
    carol = Account.objects.get(alias="@carol")
    assert carol.balance.available == 1234 and carol.balance.scale == 2
    assert carol.status_code == "FROZEN"
    assert Transaction.objects.get(pk=found).destination == ["@fees/platform", "@carol"]
