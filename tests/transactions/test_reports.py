"""The trial balance and the period report, by effective date: each account's debits and
credits per asset and chart of accounts, in which each asset's debits equal its credits; the
same reports through the API, the admin (a page and its CSV) and ``manage.py ledger_report``
(docs/TIME.md)."""

from __future__ import annotations

import csv
import datetime as dt
import io

import pytest
from django.core.management import call_command
from django.utils import timezone

from organizations.models import Ledger
from tests.admin.helpers import staff_client
from tests.transactions.conftest import payment

pytestmark = pytest.mark.django_db


def _day(days_ago: int) -> dt.date:
    return timezone.now().date() - dt.timedelta(days=days_ago)


def _noon(days_ago: int) -> str:
    return f"{_day(days_ago).isoformat()}T12:00:00Z"


def _accounts(asset: dict) -> dict[str, dict]:
    """Each alias's figures, summed over the charts it appears under."""
    found: dict[str, dict] = {}
    for chart in asset["charts"]:
        for line in chart["accounts"]:
            mine = found.setdefault(line["alias"], {})
            for name, value in line.items():
                if isinstance(value, int):
                    mine[name] = mine.get(name, 0) + value
    return found


@pytest.fixture
def dated(book):
    """Deposits and payments effective on three past days (and a hold, which moves nothing
    between accounts until it is committed)."""
    book.post(
        {"transactionTypeCode": "FUND", "variables": {"amount": 10_000, "account": "@alice"},
         "effectiveAt": _noon(10)}
    )  # fmt: skip
    assert book.pay(1_000, 100, effectiveAt=_noon(5)).status_code == 201
    assert book.pay(2_000, 0, effectiveAt=_noon(2)).status_code == 201
    held = book.post({**payment(500, 0), "transactionTypeCode": "PAYMENT_HELD"})
    assert held.status_code == 201
    return book


def test_the_trial_balance_balances_and_counts_what_took_effect_by_then(dated):
    book = dated
    answer = book.api.get(f"{book.url}/trial-balance", {"at": _day(3).isoformat()})
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["timeZone"] == "UTC" and body["at"].startswith(_day(3).isoformat())
    (brl,) = body["assets"]
    assert (brl["assetCode"], brl["scale"]) == ("BRL", 2)
    assert brl["debits"] == brl["credits"] == 10_000 + 1_100
    lines = _accounts(brl)
    assert lines["@alice"] == {"debits": 1_100, "credits": 10_000, "balance": 8_900}
    assert lines["@bob"] == {"debits": 0, "credits": 1_000, "balance": 1_000}
    assert lines["@fees/platform"]["balance"] == 100
    assert lines["@external/BRL"] == {"debits": 10_000, "credits": 0, "balance": -10_000}
    # Grouped by the charts of accounts the templates name, each with its own totals.
    charts = {chart["chartOfAccounts"]: chart for chart in brl["charts"]}
    assert charts["CASH_IN"]["debits"] == 10_000 and charts["DEPOSITS"]["credits"] == 10_000
    assert charts["PAYMENT_DEBIT"]["debits"] == 1_100
    assert sum(c["debits"] for c in brl["charts"]) == brl["debits"]

    now = book.api.get(f"{book.url}/trial-balance").json()
    (brl,) = now["assets"]
    assert brl["debits"] == brl["credits"] == 10_000 + 1_100 + 2_000
    # The hold moves money within @alice: neither a debit nor a credit.
    assert _accounts(brl)["@alice"]["debits"] == 3_100
    before = book.api.get(f"{book.url}/trial-balance", {"at": _day(11).isoformat()}).json()
    assert before["assets"] == []


def test_the_period_report_opens_moves_and_closes(dated):
    book = dated
    answer = book.api.get(
        f"{book.url}/period-report", {"from": _day(6).isoformat(), "to": _day(1).isoformat()}
    )
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["from"].startswith(_day(6).isoformat())
    (brl,) = body["assets"]
    alice = _accounts(brl)["@alice"]
    assert alice == {"opening": 10_000, "debits": 3_100, "credits": 0, "closing": 6_900}
    bob = _accounts(brl)["@bob"]
    assert bob == {"opening": 0, "debits": 0, "credits": 3_000, "closing": 3_000}
    assert brl["debits"] == brl["credits"] == 3_100
    assert brl["opening"] == brl["closing"] == 0  # every asset's books sum to zero
    for chart in brl["charts"]:
        for line in chart["accounts"]:
            assert line["closing"] == line["opening"] + line["credits"] - line["debits"]


def test_reports_read_days_in_the_ledger_s_time_zone(book):
    assert book.api.patch(book.url, {"timeZone": "America/Sao_Paulo"}).status_code == 200
    # 01:00 UTC on day D is still day D-1 in São Paulo (UTC-3).
    late = f"{_day(3).isoformat()}T01:00:00Z"
    book.post(
        {"transactionTypeCode": "FUND", "variables": {"amount": 700, "account": "@bob"},
         "effectiveAt": late}
    )  # fmt: skip
    on_the_day_before = book.api.get(f"{book.url}/trial-balance", {"at": _day(4).isoformat()})
    (brl,) = on_the_day_before.json()["assets"]
    assert _accounts(brl)["@bob"]["balance"] == 700
    assert on_the_day_before.json()["timeZone"] == "America/Sao_Paulo"


def test_report_parameters_are_checked(book):
    url = f"{book.url}/period-report"
    missing = book.api.get(url, {"from": "2026-01-01"})
    assert missing.status_code == 400 and missing.json()["code"] == "0009"
    assert missing.json()["fields"] == {"to": "required"}
    backwards = book.api.get(url, {"from": "2026-02-01", "to": "2026-01-01"})
    assert backwards.status_code == 400 and backwards.json()["code"] == "0083"
    malformed = book.api.get(f"{book.url}/trial-balance", {"at": "yesterday"})
    assert malformed.status_code == 400 and malformed.json()["code"] == "0077"
    unknown = book.api.get(f"{book.url}/trial-balance", {"date": "2026-01-01"})
    assert unknown.status_code == 400 and unknown.json()["code"] == "0082"


def test_mixed_scales_are_summed_exactly_at_the_largest(book):
    book.post_template(
        """
(transaction-template v1
  (chart-of-accounts-group-name MICRO)
  (code MICRO)
  (send BRL $amount|4 (source (from @alice :amount BRL $amount|4)))
  (distribute (to @bob :amount BRL $amount|4)))
"""
    )
    book.fund("@alice", 1_000)
    response = book.post({"transactionTypeCode": "MICRO", "variables": {"amount": 12_345}})
    assert response.status_code == 201, response.content
    (brl,) = book.api.get(f"{book.url}/trial-balance").json()["assets"]
    assert brl["scale"] == 4
    assert _accounts(brl)["@alice"] == {"debits": 12_345, "credits": 100_000, "balance": 87_655}
    assert brl["debits"] == brl["credits"] == 112_345


def test_the_admin_page_shows_and_exports_them(dated):
    ledger = Ledger.objects.get()
    url = f"/admin/organizations/ledger/{ledger.pk}/reports/"
    clerk = staff_client("organizations.view_ledger", "transactions.view_transaction")
    page = clerk.get(url, {"kind": "trial", "at": _day(3).isoformat()})
    assert page.status_code == 200
    text = page.content.decode()
    assert "@alice" in text and "111.00" in text and 'id="report-csv"' in text
    exported = clerk.get(url, {"kind": "period", "start": _day(6), "end": _day(1), "format": "csv"})
    assert exported.status_code == 200 and exported["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(b"".join(exported.streaming_content).decode())))
    assert rows[0] == [
        "asset", "chart_of_accounts", "account", "account_id",
        "opening", "debits", "credits", "closing",
    ]  # fmt: skip
    assert ["BRL", "", "total", "", "0.00", "31.00", "31.00", "0.00"] in rows
    backwards = clerk.get(url, {"kind": "period", "start": _day(1), "end": _day(6)})
    assert "0083" in backwards.content.decode()
    no_transactions = staff_client("organizations.view_ledger", username="viewer")
    assert no_transactions.get(url).status_code == 403


def test_the_command_prints_them_as_csv(dated):
    ledger = Ledger.objects.get()
    ids = {"organization": str(ledger.organization_id), "ledger": str(ledger.pk)}
    out = io.StringIO()
    call_command("ledger_report", trial_balance=True, at=_day(3).isoformat(), stdout=out, **ids)
    rows = list(csv.reader(io.StringIO(out.getvalue())))
    assert rows[0][-3:] == ["debits", "credits", "balance"]
    assert ["BRL", "", "total", "", "111.00", "111.00", "0.00"] in rows
    out = io.StringIO()
    call_command(
        "ledger_report", period=[_day(6).isoformat(), _day(1).isoformat()], stdout=out, **ids
    )
    rows = list(csv.reader(io.StringIO(out.getvalue())))
    assert ["BRL", "", "total", "", "0.00", "31.00", "31.00", "0.00"] in rows


def test_a_renamed_account_is_one_line_under_its_alias_now(dated):
    book = dated
    bob = book.accounts["@bob"]["id"]
    renamed = book.api.patch(f"{book.url}/accounts/{bob}", {"alias": "@robert"})
    assert renamed.status_code == 200, renamed.content
    (brl,) = book.api.get(f"{book.url}/trial-balance").json()["assets"]
    lines = _accounts(brl)
    assert "@bob" not in lines and lines["@robert"]["credits"] == 3_000


def test_days_end_where_the_next_begins_when_clocks_turn_back_at_midnight(book):
    """In America/Santiago the clocks went back an hour at midnight ending 2026-04-04: the day
    ends at 04:00 UTC, not when the clock first shows 23:59:59 (03:59:59 UTC)."""
    assert book.api.patch(book.url, {"timeZone": "America/Santiago"}).status_code == 200
    in_the_repeated_hour = "2026-04-05T03:30:00Z"  # 23:30 on the 4th, the second time
    book.post(
        {"transactionTypeCode": "FUND", "variables": {"amount": 900, "account": "@bob"},
         "effectiveAt": in_the_repeated_hour}
    )  # fmt: skip
    day = book.api.get(f"{book.url}/period-report", {"from": "2026-04-04", "to": "2026-04-04"})
    (brl,) = day.json()["assets"]
    assert _accounts(brl)["@bob"]["credits"] == 900
    next_day = book.api.get(
        f"{book.url}/period-report", {"from": "2026-04-05", "to": "2026-04-05"}
    ).json()
    assert next_day["assets"][0]["charts"][0]["accounts"][0]["opening"] != 0


def test_a_ledger_may_be_created_with_its_time_zone_and_closed_books(api, organization):
    url = f"/v1/organizations/{organization['id']}/ledgers"
    created = api.post(
        url, {"name": "Late", "timeZone": "Europe/Lisbon", "closedThrough": "2025-12-31"}
    )
    assert created.status_code == 201, created.content
    assert (created.json()["timeZone"], created.json()["closedThrough"]) == (
        "Europe/Lisbon",
        "2025-12-31",
    )
    assert Ledger.objects.get(name="Late").period_opens_at == dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def test_the_command_refuses_a_period_that_runs_backwards(dated):
    from django.core.management.base import CommandError

    ledger = Ledger.objects.get()
    ids = {"organization": str(ledger.organization_id), "ledger": str(ledger.pk)}
    with pytest.raises(CommandError, match="0083"):
        call_command("ledger_report", period=["2026-02-01", "2026-01-01"], **ids)
    with pytest.raises(CommandError, match="--trial-balance"):
        call_command("ledger_report", at="2026-02-01", **ids)
