"""Amounts and balances hold 38 significant digits at any scale, and every sum of them is exact.

Before: balances were 64-bit, so one posting of 1 unit at scale 18 into an account capped it
at ~9.22 units forever (any payer could do it to any payee, or to ``@external/<CODE>``), and
``available + onHold`` beyond 64 bits made charts, the dashboard and ``check_ledger`` answer
500 (``bigint out of range``) for every ledger."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from ledgerproject.amounts import MAX_AMOUNT
from tests.admin.helpers import ledger_of
from tests.conftest import assert_error

TINY = """
(transaction-template v1 (chart-of-accounts-group-name G) (code TINY)
  (send BRL $amount|18 (source (from @external/BRL :amount BRL $amount|18)))
  (distribute (to $account :amount BRL $amount|18)))
"""


@pytest.fixture
def tiny(book):
    book.post_template(TINY)
    return book


def _tiny(book, alias: str, amount: int):
    return book.post(
        {"transactionTypeCode": "TINY", "variables": {"amount": amount, "account": alias}}
    )


def test_a_unit_at_scale_18_no_longer_caps_the_account(tiny):
    tiny.fund("@alice", 1_000_000)
    assert _tiny(tiny, "@bob", 1).status_code == 201
    assert tiny.pay(1_000, 0).status_code == 201  # 10.00 into @bob, now at scale 18
    assert tiny.balance("@bob") == {"available": 10 * 10**18 + 1, "onHold": 0, "scale": 18}
    assert tiny.pay(990_000, 0).status_code == 201  # 9,900.00 more: far past 9.22 units
    assert tiny.available("@bob") == 9_910 * 10**18 + 1


def test_a_unit_at_scale_18_no_longer_caps_the_external_account(tiny):
    """@external/BRL is now at scale 18 too; it still funds a billion BRL at once."""
    assert _tiny(tiny, "@alice", 1).status_code == 201
    tiny.fund("@bob", 10**11)
    assert tiny.balance("@external/BRL") == {
        "available": -(10**9 * 10**18 + 1),
        "onHold": 0,
        "scale": 18,
    }


def test_a_38_digit_amount_posts_and_one_past_it_is_refused(book):
    big = 10**37
    assert book.fund("@alice", big)["amount"] == {"amount": big, "scale": 2}
    assert book.available("@alice") == big
    response = book.post(
        {"transactionTypeCode": "FUND", "variables": {"amount": MAX_AMOUNT + 1, "account": "@bob"}}
    )
    assert_error(response, 400, "0047")
    for _ in range(8):
        book.fund("@alice", big)
    response = book.post(
        {"transactionTypeCode": "FUND", "variables": {"amount": big, "account": "@alice"}}
    )
    assert_error(response, 422, "0008")  # 10**38 does not fit
    assert book.available("@alice") == 9 * big


def test_sums_beyond_64_bits_are_exact_in_charts_dashboard_and_check_ledger(book):
    book.fund("@alice", 2**63 - 1)
    book.fund("@bob", 2**63 - 1)
    held = book.post(
        {
            "transactionTypeCode": "PAYMENT_HELD",
            "variables": {"amount": 10, "fee": 0, "source": "@alice", "destination": "@bob"},
        }
    )
    assert held.status_code == 201, held.content
    chart = book.api.post(f"{book.url}/charts", {"type": "totalAmountByAsset"})
    assert chart.status_code == 200, chart.content
    assert chart.json()["data"] == [{"metric": "BRL", "count": 2 * (2**63 - 1), "scale": 2}]
    out = io.StringIO()
    call_command("check_ledger", stdout=out, stderr=io.StringIO())
    assert "OK: 1 ledger(s)" in out.getvalue()


def test_the_dashboard_renders_sums_beyond_64_bits(book, admin_client):
    book.fund("@alice", 2**63 - 1)
    book.fund("@bob", 2**63 - 1)
    response = admin_client.get(f"/admin/organizations/ledger/{ledger_of(book).pk}/dashboard/")
    assert response.status_code == 200
