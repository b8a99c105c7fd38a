"""A ledger's journal page in the back office (``transactions.admin_reports.ledger_journal``):
its latest blocks, and *Verify*, which runs check_ledger's two journal checks and names what
no longer verifies."""

from __future__ import annotations

from journal.services import seal
from tests.admin.helpers import ledger_of, staff_client
from tests.journal.test_tampering import triggers_off


def test_the_page_lists_the_blocks_and_verifies_them(admin_client, book):
    book.fund("@alice", 5_000)
    book.pay(100, 5)
    ledger = ledger_of(book)
    seal(ledger.organization_id, ledger.pk)
    url = f"/admin/organizations/ledger/{ledger.pk}/journal/"
    page = admin_client.get(url)
    assert page.status_code == 200
    assert len(page.context["latest"]) >= 1 and page.context["totals"]["entries"] >= 2
    assert page.context["report"] is None  # verifying is a button, not a page view
    verified = admin_client.post(url, {"verify": "1"})
    report = verified.context["report"]
    assert report.checks == [
        "the journal's blocks chain and hold their entries",
        "the books match their journal",
    ]
    assert report.violations == [] and "Verified:" in verified.content.decode()
    dashboard = admin_client.get(f"/admin/organizations/ledger/{ledger.pk}/dashboard/")
    assert f'href="{url}"' in dashboard.content.decode()


def test_a_changed_block_is_named(admin_client, book):
    book.fund("@alice", 5_000)
    ledger = ledger_of(book)
    seal(ledger.organization_id, ledger.pk)
    with triggers_off() as cursor:
        cursor.execute("UPDATE journal_block SET root = %s", ["ab" * 32])
    url = f"/admin/organizations/ledger/{ledger.pk}/journal/"
    html = admin_client.post(url, {"verify": "1"}).content.decode()
    assert "The journal does not verify" in html
    assert "block 0: its root does not match its entries&#x27; hashes" in html


def test_the_page_needs_the_views_of_ledgers_and_transactions(book):
    ledger = ledger_of(book)
    url = f"/admin/organizations/ledger/{ledger.pk}/journal/"
    assert staff_client("organizations.view_ledger").get(url).status_code == 403
    both = staff_client(
        "organizations.view_ledger", "transactions.view_transaction", username="auditor"
    )
    assert both.get(url).status_code == 200
