"""The ledger dashboard: three server-side SVG charts, latest transactions, balances, and the
check_ledger button with its report."""

from __future__ import annotations

import re

import pytest

from ledgerproject.amounts import format_amount
from organizations.models import Balance
from tests.admin.helpers import ledger_of
from transactions.charts_svg import Bar, horizontal_bars, vertical_bars


@pytest.fixture
def url(book):
    book.fund("@alice", 100_000)
    book.pay(2500, 100)
    book.pay(100, 0, pending=True)
    return f"/admin/organizations/ledger/{ledger_of(book).pk}/dashboard/"


def test_it_draws_four_charts_without_any_network(admin_client, url):
    html = admin_client.get(url).content.decode()
    assert html.count("<svg xmlns='http://www.w3.org/2000/svg' role='img'") == 4
    for label in (
        "SENT transactions per day",
        "Transactions by status",
        "Amount by asset",
        "Overdrafts by asset: no data",  # nobody is overdrawn in this book
    ):
        assert f"aria-label='{label}'" in html
    assert "<title>SENT: 2</title>" in html and "<title>PRE_APPROVED: 1</title>" in html
    assert "1000.00 BRL" in html  # available + on hold over non-external accounts
    assert not re.search(r"""(src|href)=["']https?://""", html)


def test_it_lists_latest_transactions_and_balances(admin_client, url):
    html = admin_client.get(url, {"days": "7"}).content.decode()
    assert html.count("/admin/transactions/transaction/0") >= 3
    assert 'data-alias="@alice"' in html and "973.00" in html and "1.00" in html
    assert "<strong>7 days</strong>" in html
    assert admin_client.get(url, {"days": "oops"}).status_code == 200


def test_the_check_button_shows_the_report(admin_client, url, books_left_unbalanced):
    html = admin_client.post(url, {"check": "1"}).content.decode()
    assert "check_ledger: OK" in html
    assert "statements replay to balances" in html
    Balance.objects.filter(account__alias="@bob").update(available=1)
    broken = admin_client.post(url, {"check": "1"}).content.decode()
    assert "violation(s)" in broken and "@bob: statement" in broken


def test_the_svg_escapes_labels_and_formats_exactly():
    svg = horizontal_bars([Bar("<b>", 3, "a&b")], title="t<")
    assert "&lt;b&gt;" in svg and "a&amp;b" in svg and "<b>" not in svg
    assert "no data" in vertical_bars([], title="empty")
    assert format_amount(2600, 2) == "26.00" and format_amount(-5, 3) == "-0.005"
    assert format_amount(7, 0) == "7" and format_amount(10**20, 18) == "100.000000000000000000"
