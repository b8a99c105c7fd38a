"""Conversions between assets at the ledger's stored rates (docs/CONVERSIONS.md): a template with
``(convert ASSET|SCALE)`` sends in one asset and delivers in another; each asset balances on
its own through its conversion account; the rate is the one in force at the effective time,
direct or inverse, pinned or checked against an expected value; the amount is rounded half to
even; reverts go back at the recorded rate."""

from __future__ import annotations

import datetime as dt
from fractions import Fraction

import pytest
from django.utils import timezone

from instruments.models import RateValue
from ledgerproject.formats import render_timestamp
from organizations.models import Account, Ledger
from templates_dsl.formatter import format_template
from templates_dsl.parser import parse
from tests.admin.helpers import ledger_of
from tests.conftest import assert_error
from tests.transactions.test_effective_dates import _next_whole_second
from transactions import scheduling
from transactions.integrity import ledger_check
from transactions.models import Approval, ApprovalRule, Operation, ScheduledPosting, Transaction

pytestmark = pytest.mark.django_db

EXCHANGE = """
(transaction-template v1
  (chart-of-accounts-group-name FX)
  (code EXCHANGE)
  (description "Exchange $amount")
  (send BRL $amount|2
    (source (from $source :amount BRL $amount|2)))
  (convert USD|2)
  (distribute
    (distribute :remaining (to $destination :remaining (description "Received"))))
)
"""


def _template(code: str, *, to_scale: int = 2, source: str = "", pending: bool = False) -> str:
    rate_source = f" (rate-source {source})" if source else ""
    return f"""
(transaction-template v1
  (chart-of-accounts-group-name FX)
  (code {code})
  (pending {"true" if pending else "false"})
  (send BRL $amount|2 (source (from $source :amount BRL $amount|2)))
  (convert USD|{to_scale}{rate_source})
  (distribute (distribute :remaining (to $destination :remaining))))
"""


class Fx:
    """The posting book with USD, @usd (a USD account) and the EXCHANGE template."""

    def __init__(self, book) -> None:
        self.book = book
        created = book.api.post(
            f"{book.url}/instruments", {"name": "Dollar", "type": "currency", "code": "USD"}
        )
        assert created.status_code == 201, created.content
        book.account("@usd", assetCode="USD")
        book.account("@usd2", assetCode="USD")
        book.post_template(EXCHANGE)

    def rate(self, base: str, counter: str, amount: int, scale: int, source: str = "") -> dict:
        body = {"baseAssetCode": base, "counterAssetCode": counter, "amount": amount}
        response = self.book.api.post(
            f"{self.book.url}/asset-rates", {**body, "scale": scale, "source": source}
        )
        assert response.status_code == 201, response.content
        return response.json()

    def exchange(self, amount: int, code: str = "EXCHANGE", destination: str = "@usd", **body):
        variables = {"amount": amount, "source": "@alice", "destination": destination}
        return self.book.post({"transactionTypeCode": code, "variables": variables, **body})

    def available(self, alias: str) -> int:
        return self.book.available(alias)

    def balances(self) -> dict[str, tuple[int, int, int]]:
        """Every account's (available, on hold, scale), by alias."""
        accounts = self.book.api.get(f"{self.book.url}/accounts", {"limit": 100}).json()
        return {
            a["alias"]: (a["balance"]["available"], a["balance"]["onHold"], a["balance"]["scale"])
            for a in accounts
        }


@pytest.fixture
def fx(book) -> Fx:
    book.fund("@alice", 100_000)  # 1,000.00 BRL
    return Fx(book)


def _legs(body: dict) -> list[tuple[str, str, str, int, int]]:
    return [
        (
            op["accountAlias"],
            op["type"],
            op["assetCode"],
            op["amount"]["amount"],
            op["amount"]["scale"],
        )
        for op in body["operations"]
    ]


def test_a_conversion_balances_each_asset_through_its_conversion_account(fx):
    rate = fx.rate("BRL", "USD", 18, 2)  # 1 BRL = 0.18 USD
    response = fx.exchange(10_000)  # 100.00 BRL
    assert response.status_code == 201, response.content
    body = response.json()
    assert sorted(_legs(body)) == sorted([
        ("@alice", "DEBIT", "BRL", 10_000, 2),
        ("@conversion/USD", "DEBIT", "USD", 1_800, 2),
        ("@conversion/BRL", "CREDIT", "BRL", 10_000, 2),
        ("@usd", "CREDIT", "USD", 1_800, 2),
    ])  # fmt: skip
    assert body["assetCode"] == "BRL" and body["amount"] == {"amount": 10_000, "scale": 2}
    conversion = body["conversion"]
    assert conversion["sent"] == {"assetCode": "BRL", "amount": 10_000, "scale": 2}
    assert conversion["delivered"] == {"assetCode": "USD", "amount": 1_800, "scale": 2}
    assert conversion["rate"]["id"] == rate["id"]
    assert conversion["rate"]["direction"] == "DIRECT"
    assert (conversion["rate"]["amount"], conversion["rate"]["scale"]) == (18, 2)
    assert (conversion["rate"]["baseAssetCode"], conversion["rate"]["counterAssetCode"]) == (
        "BRL",
        "USD",
    )
    assert all(op["conversion"] == conversion for op in body["operations"])
    said = {op["accountAlias"]: op["description"] for op in body["operations"]}
    assert (
        said["@conversion/USD"]
        == said["@conversion/BRL"]
        == ("Conversion of 100.00 BRL to 18.00 USD")
    )
    assert body["source"] == ["@alice", "@conversion/USD"]
    assert body["destination"] == ["@conversion/BRL", "@usd"]
    stored = Transaction.objects.get(pk=body["id"])
    assert stored.conversion == conversion
    assert {op.conversion["rate"]["id"] for op in Operation.objects.filter(transaction=stored)} == {
        rate["id"]
    }
    # Read back as it was answered, and each asset's debits equal its credits.
    again = fx.book.api.get(f"{fx.book.url}/transactions/{body['id']}").json()
    assert again["conversion"] == conversion
    assert fx.available("@usd") == 1_800
    assert fx.available("@conversion/USD") == -1_800
    assert fx.available("@conversion/BRL") == 10_000
    assert fx.available("@alice") == 90_000
    ledger = Ledger.objects.get(pk=body["ledgerId"])
    report = ledger_check(ledger)
    assert report.ok, report.violations
    assert len(report.checks) > 5


def test_conversion_accounts_are_the_ledgers_own(fx):
    fx.rate("BRL", "USD", 18, 2)
    assert not Account.objects.filter(alias__startswith="@conversion/").exists()
    assert fx.exchange(100).status_code == 201
    made = Account.objects.filter(alias__startswith="@conversion/").order_by("alias")
    assert [(a.alias, a.type, a.asset_code) for a in made] == [
        ("@conversion/BRL", "conversion", "BRL"),
        ("@conversion/USD", "conversion", "USD"),
    ]
    assert fx.exchange(100).status_code == 201
    assert made.count() == 2  # made once, by the first conversion
    url = f"{fx.book.url}/accounts"
    refused = fx.book.api.post(url, {"alias": "@conversion/EUR", "assetCode": "BRL"})
    assert_error(refused, 422, "0074")
    usd = made.get(alias="@conversion/USD")
    assert_error(fx.book.api.patch(f"{url}/{usd.pk}", {"name": "mine"}), 422, "0074")
    assert_error(fx.book.api.delete(f"{url}/{usd.pk}"), 422, "0074")
    renamed = fx.book.api.patch(
        f"{url}/{fx.book.accounts['@bob']['id']}", {"alias": "@conversion/BRL2"}
    )
    assert_error(renamed, 422, "0074")


def test_only_the_inverse_rate_stored_is_applied_inverted(fx):
    fx.rate("USD", "BRL", 5, 0)  # 1 USD = 5 BRL, so 1 BRL = 0.2 USD
    response = fx.exchange(2_500)  # 25.00 BRL
    assert response.status_code == 201, response.content
    conversion = response.json()["conversion"]
    assert conversion["rate"]["direction"] == "INVERSE"
    assert (conversion["rate"]["baseAssetCode"], conversion["rate"]["counterAssetCode"]) == (
        "USD",
        "BRL",
    )
    assert conversion["delivered"]["amount"] == 500  # 5.00 USD


def test_the_direct_rate_wins_over_an_inverse_one(fx):
    fx.rate("USD", "BRL", 5, 0)
    direct = fx.rate("BRL", "USD", 25, 2)
    body = fx.exchange(400).json()
    assert body["conversion"]["rate"]["id"] == direct["id"]
    assert body["conversion"]["delivered"]["amount"] == 100


@pytest.mark.parametrize(
    ("sent", "delivered"),
    [(1, 0), (3, 2), (5, 2), (7, 4), (9, 4), (11, 6)],
)
def test_the_converted_amount_is_rounded_half_to_even(fx, sent, delivered):
    """At 0.5 USD per BRL, 0.03 BRL is 0.015 USD: 0.02 at scale 2 (the even neighbour), and
    0.05 BRL is 0.025: 0.02 too (half up would say 0.03)."""
    fx.rate("BRL", "USD", 5, 1)
    response = fx.exchange(sent)
    if delivered == 0:
        assert_error(response, 422, "0073")
        assert "converts to 0" in response.json()["description"]
        return
    assert response.status_code == 201, response.content
    assert response.json()["conversion"]["delivered"]["amount"] == delivered
    assert fx.available("@usd") == delivered


def test_a_revert_goes_back_at_the_recorded_rate(fx):
    rate = fx.rate("BRL", "USD", 18, 2)
    before = fx.balances()
    posted = fx.exchange(12_345).json()
    changed = fx.book.api.patch(f"{fx.book.url}/asset-rates/{rate['id']}", {"amount": 99})
    assert changed.status_code == 200, changed.content
    reverted = fx.book.api.post(f"{fx.book.url}/transactions/{posted['id']}/revert")
    assert reverted.status_code == 201, reverted.content
    reversal = reverted.json()
    assert reversal["conversion"] == posted["conversion"]
    assert sorted(_legs(reversal)) == sorted(
        (alias, "CREDIT" if side == "DEBIT" else "DEBIT", asset, amount, scale)
        for alias, side, asset, amount, scale in _legs(posted)
    )
    after = fx.balances()
    for alias, (available, on_hold, _) in after.items():
        was = before.get(alias, (0, 0, 0))
        assert (available, on_hold) == (was[0], was[1]) or alias.startswith("@conversion/")
    assert after["@conversion/BRL"][:2] == (0, 0)
    assert after["@conversion/USD"][:2] == (0, 0)
    _books_hold(fx)


def test_a_pending_conversion_holds_commits_and_cancels_in_both_assets(fx):
    fx.rate("BRL", "USD", 18, 2)
    fx.book.post_template(_template("EXCHANGE_HELD", pending=True))
    held = fx.exchange(10_000, code="EXCHANGE_HELD").json()
    assert held["status"] == "PRE_APPROVED"
    assert fx.book.balance("@alice")["onHold"] == 10_000
    assert fx.book.balance("@conversion/USD")["onHold"] == 1_800
    assert fx.available("@usd") == 0
    url = f"{fx.book.url}/transactions/{held['id']}"
    partial = fx.book.api.post(f"{url}/commit", {"amount": 5_000})
    assert_error(partial, 422, "0008")
    assert "conversion" in partial.json()["description"]
    committed = fx.book.api.post(f"{url}/commit")
    assert committed.status_code == 200, committed.content
    assert fx.available("@usd") == 1_800
    assert fx.book.balance("@conversion/USD") == {**fx.book.balance("@conversion/USD"), "onHold": 0}
    second = fx.exchange(10_000, code="EXCHANGE_HELD").json()
    canceled = fx.book.api.post(f"{fx.book.url}/transactions/{second['id']}/cancel")
    assert canceled.status_code == 201, canceled.content
    assert fx.book.balance("@alice")["onHold"] == 0
    assert fx.available("@alice") == 90_000
    assert fx.book.balance("@conversion/USD")["available"] == -1_800
    _books_hold(fx)


def _books_hold(fx: Fx) -> None:
    report = ledger_check(Ledger.objects.get(pk=fx.book.url.rsplit("/", 1)[1]))
    assert report.ok, report.violations


def test_a_backdated_conversion_takes_the_value_in_force_then(fx):
    rate = fx.rate("BRL", "USD", 18, 2)
    then = _next_whole_second()
    fx.book.api.patch(f"{fx.book.url}/asset-rates/{rate['id']}", {"amount": 20})
    assert RateValue.objects.filter(rate_id=rate["id"]).count() == 2
    old = fx.exchange(10_000, effectiveAt=render_timestamp(then)).json()
    assert old["conversion"]["delivered"]["amount"] == 1_800
    assert old["conversion"]["rate"]["amount"] == 18
    now = fx.exchange(10_000).json()
    assert now["conversion"]["delivered"]["amount"] == 2_000
    before = render_timestamp(timezone.now() - dt.timedelta(days=1))
    assert_error(fx.exchange(100, effectiveAt=before), 422, "0126")


def test_no_rate_a_deleted_rate_or_an_unknown_pin_is_refused(fx):
    assert_error(fx.exchange(100), 422, "0126")
    rate = fx.rate("BRL", "USD", 18, 2)
    other = fx.rate("BRL", "USD", 19, 2, source="bank")
    pinned = fx.exchange(100, rate={"id": other["id"]})
    assert pinned.status_code == 201, pinned.content
    assert pinned.json()["conversion"]["rate"]["id"] == other["id"]
    assert_error(fx.exchange(100), 422, "0129")  # two sources, none named
    fx.book.api.delete(f"{fx.book.url}/asset-rates/{other['id']}")
    assert_error(fx.exchange(100, rate={"id": other["id"]}), 422, "0126")
    assert fx.exchange(100).json()["conversion"]["rate"]["id"] == rate["id"]
    fx.book.api.delete(f"{fx.book.url}/asset-rates/{rate['id']}")
    assert_error(fx.exchange(100), 422, "0126")


def test_a_template_may_name_the_rates_source(fx):
    fx.rate("BRL", "USD", 18, 2)
    bank = fx.rate("BRL", "USD", 19, 2, source="bank")
    fx.book.post_template(_template("EXCHANGE_BANK", source="bank"))
    body = fx.exchange(100, code="EXCHANGE_BANK").json()
    assert body["conversion"]["rate"]["id"] == bank["id"]
    assert body["conversion"]["rate"]["source"] == "bank"


def test_an_expected_rate_and_its_tolerance(fx):
    fx.rate("BRL", "USD", 1_800, 4)  # 0.18
    exact = fx.exchange(100, rate={"expected": {"amount": 18, "scale": 2}})
    assert exact.status_code == 201, exact.content
    off = fx.exchange(100, rate={"expected": {"amount": 181, "scale": 3}})
    assert_error(off, 422, "0128")
    assert off.json()["fields"] == {"rate.expected": off.json()["description"]}
    # 0.181 is 55.2 basis points of 0.181 from 0.18: refused at 55, taken at 56.
    near = {"expected": {"amount": 181, "scale": 3}}
    assert_error(fx.exchange(100, rate={**near, "toleranceBps": 55}), 422, "0128")
    assert fx.exchange(100, rate={**near, "toleranceBps": 56}).status_code == 201
    assert_error(fx.exchange(100, rate={"toleranceBps": 5}), 400, "0047")
    assert_error(fx.exchange(100, rate={"expected": {"amount": 1.5, "scale": 2}}), 400, "0047")


def test_a_ledger_may_refuse_old_rates(fx):
    rate = fx.rate("BRL", "USD", 18, 2)
    ledger = f"{fx.book.url}"
    set_age = fx.book.api.patch(ledger, {"maxRateAgeSeconds": 60})
    assert set_age.status_code == 200, set_age.content
    assert set_age.json()["maxRateAgeSeconds"] == 60
    assert fx.exchange(100).status_code == 201
    RateValue.objects.filter(rate_id=rate["id"]).update(
        valid_from=timezone.now() - dt.timedelta(seconds=61)
    )
    assert_error(fx.exchange(100), 422, "0127")
    assert_error(fx.book.api.patch(ledger, {"maxRateAgeSeconds": 0}), 400, "0047")
    assert fx.book.api.patch(ledger, {"maxRateAgeSeconds": None}).status_code == 200
    assert fx.exchange(100).status_code == 201


def test_rate_terms_are_only_for_a_template_that_converts(fx):
    response = fx.book.pay(100, 1, rate={"expected": {"amount": 1, "scale": 0}})
    assert_error(response, 400, "0047")
    assert response.json()["fields"] == {"rate": "the template does not convert"}


def test_a_dry_run_converts_and_makes_nothing(fx):
    fx.rate("BRL", "USD", 18, 2)
    response = fx.book.post(
        {
            "transactionTypeCode": "EXCHANGE",
            "variables": {"amount": 1_000, "source": "@alice", "destination": "@usd"},
        },
        QUERY_STRING="dryRun=true",
    )
    assert response.status_code == 200, response.content
    assert response.json()["conversion"]["delivered"]["amount"] == 180
    assert not Account.objects.filter(alias__startswith="@conversion/").exists()
    assert fx.available("@usd") == 0


def test_the_template_notation_checks_a_conversion(fx):
    url = f"{fx.book.url}/transaction-templates"
    same = _template("SAME").replace("(convert USD|2)", "(convert BRL|2)")
    response = fx.book.api.post(url, same, content_type="text/plain")
    assert_error(response, 400, "0017")
    assert response.json()["description"].startswith(
        "line 7, column 12: asset 'BRL'; expected an asset other"
    )
    wrong_to = (
        EXCHANGE.replace("CODE EXCHANGE", "CODE X")
        .replace(
            "(distribute :remaining", "(to @usd2 :amount BRL $fee|2)\n    (distribute :remaining"
        )
        .replace("(code EXCHANGE)", "(code WRONG_TO)")
    )
    response = fx.book.api.post(url, wrong_to, content_type="text/plain")
    assert_error(response, 400, "0017")
    assert "asset 'BRL'; expected the converted asset USD" in response.json()["description"]
    missing = _template("NO_EUR").replace("USD|2", "EUR|2")
    response = fx.book.api.post(url, missing, content_type="text/plain")
    assert_error(response, 400, "0017")
    assert "the instrument EUR does not exist in this ledger" in response.json()["description"]
    scale = _template("BIG_SCALE", to_scale=19)
    response = fx.book.api.post(url, scale, content_type="text/plain")
    assert_error(response, 400, "0017")
    assert "scale 19; expected a scale from 0 to 18" in response.json()["description"]


def test_the_formatter_keeps_a_conversion():
    text = _template("F", source='"ECB daily"')
    tree = parse(text)
    assert tree.convert is not None and tree.convert.rate_source == "ECB daily"
    formatted = format_template(tree)
    assert '(convert USD|2 (rate-source "ECB daily"))' in formatted
    assert parse(formatted) == tree
    plain = parse(_template("G"))
    assert "(convert USD|2)" in format_template(plain)
    assert parse(format_template(plain)) == plain


EXCHANGE_FEE = """
(transaction-template v1
  (chart-of-accounts-group-name FX)
  (code EXCHANGE_FEE)
  (send BRL $amount|2 (source (from $source :amount BRL $amount|2)))
  (convert USD|3)
  (distribute
    (to @usd2 :amount USD $fee|3 (description "Fee $fee of $amount"))
    (distribute :remaining (to $destination :remaining))))
"""


def test_destinations_of_a_conversion_name_amounts_in_the_converted_asset(fx):
    fx.rate("BRL", "USD", 2, 1)  # 0.2
    fx.book.post_template(EXCHANGE_FEE)
    body = {
        "transactionTypeCode": "EXCHANGE_FEE",
        "variables": {"amount": 10_000, "fee": 1_500, "source": "@alice", "destination": "@usd"},
    }
    response = fx.book.post(body)
    assert response.status_code == 201, response.content
    legs = {op["accountAlias"]: op for op in response.json()["operations"]}
    assert legs["@usd2"]["amount"] == {"amount": 1_500, "scale": 3}
    assert legs["@usd2"]["description"] == "Fee 1.500 USD of 100.00 BRL"
    assert legs["@usd"]["amount"] == {"amount": 18_500, "scale": 3}  # 20.000 - 1.500
    too_much = {**body, "variables": {**body["variables"], "fee": 20_001}}
    refused = fx.book.post(too_much)
    assert_error(refused, 422, "0073")
    assert "more than the amount delivered, 20000" in refused.json()["description"]


def test_inline_conversions_in_both_spellings(fx):
    fx.rate("BRL", "USD", 18, 2)
    variables = {"amount": 1_000, "source": "@alice", "destination": "@usd"}
    dsl = fx.book.api.post(
        f"{fx.book.url}/transactions/dsl",
        {
            "dsl": _template("INLINE"),
            "variables": variables,
            "rate": {"expected": {"amount": 18, "scale": 2}},
        },
    )
    assert dsl.status_code == 201, dsl.content
    assert dsl.json()["conversion"]["delivered"]["amount"] == 180
    tree = {
        "chartOfAccountsGroupName": "FX",
        "send": {
            "asset": "BRL",
            "amount": {"terms": [{"variable": "amount"}], "scale": 2},
            "source": [
                {
                    "account": {"variable": "source"},
                    "asset": "BRL",
                    "amount": {"terms": [{"variable": "amount"}], "scale": 2},
                }
            ],
        },
        "convert": {"asset": "USD", "scale": 2},
        "distribute": {"to": [], "remaining": {"account": {"variable": "destination"}}},
    }
    posted = fx.book.api.post(f"{fx.book.url}/transactions/json", {**tree, "variables": variables})
    assert posted.status_code == 201, posted.content
    assert posted.json()["conversion"]["delivered"]["amount"] == 180
    same = {**tree, "convert": {"asset": "BRL", "scale": 2}, "variables": variables}
    refused = fx.book.api.post(f"{fx.book.url}/transactions/json", same)
    assert_error(refused, 400, "0017")
    assert "$.convert.asset" in refused.json()["fields"]


def test_extreme_scales_and_38_digit_amounts_convert_exactly(fx):
    """A rate at scale 18 and amounts at the largest scale: the product is exact, and rounded
    once, half to even; a result past the largest amount is refused, not cut."""
    big = 10**18 - 1
    fx.rate("BRL", "USD", big, 18)  # 0.999999999999999999
    fx.book.post_template(_template("TO_18", to_scale=18))
    fx.book.fund("@alice", 10**22)
    amount = 5 * 10**21 + 12_345
    response = fx.exchange(amount, code="TO_18")
    assert response.status_code == 201, response.content
    exact = Fraction(amount, 10**2) * Fraction(big, 10**18) * 10**18
    assert response.json()["conversion"]["delivered"]["amount"] == round(exact)
    assert len(str(round(exact))) == 38
    fx.book.fund("@alice", 10**36)
    refused = fx.exchange(10**36, code="TO_18")  # 10**34 BRL is ~10**52 at scale 18
    assert_error(refused, 422, "0073")
    assert "more than the largest amount" in refused.json()["description"]


def test_the_back_office_posts_a_conversion_and_shows_its_rate(admin_client, fx):
    rate = fx.rate("BRL", "USD", 2, 1)
    fx.book.post_template(EXCHANGE_FEE)
    url = f"/admin/organizations/ledger/{ledger_of(fx.book).pk}/post/"
    form = admin_client.get(url, {"template": "EXCHANGE_FEE"}).content.decode()
    assert "BRL, up to 2 decimal(s)" in form and "USD, up to 3 decimal(s)" in form
    assert '<option value="@usd">' in form and '<option value="@alice">' in form
    fields = {
        "template": "EXCHANGE_FEE",
        "var_amount": "100.00",
        "var_fee": "1.5",
        "var_source": "@alice",
        "var_destination": "@usd",
    }
    preview = admin_client.post(url, {**fields, "_preview": "1"}).content.decode()
    assert "18.500 USD" in preview and "nothing was written" in preview
    posted = admin_client.post(url, {**fields, "_post": "1", "reason": "Desk request"})
    assert posted.status_code == 302, posted.content
    page = admin_client.get(posted["Location"]).content.decode()
    assert f"100.00 BRL to 20.000 USD at BRL/USD 0.2 (rate {rate['id']}" in page
    assert fx.available("@usd") == 18_500 and fx.available("@usd2") == 1_500


def test_a_scheduled_conversion_converts_when_it_posts(fx):
    rate = fx.rate("BRL", "USD", 18, 2)
    later = render_timestamp(timezone.now() + dt.timedelta(hours=1))
    terms = {"id": rate["id"], "expected": {"amount": 20, "scale": 2}, "toleranceBps": 0}
    refused = fx.exchange(100, scheduledFor=later, rate=terms)
    assert_error(refused, 422, "0128")  # checked when it is scheduled, against the rate now
    accepted = fx.exchange(100, scheduledFor=later, rate={**terms, "toleranceBps": 1_200})
    assert accepted.status_code == 202, accepted.content
    fx.book.api.patch(f"{fx.book.url}/asset-rates/{rate['id']}", {"amount": 19})
    # It comes due now: after the rate changed, so it converts at the new value.
    row = ScheduledPosting.objects.get(pk=accepted.json()["id"])
    ScheduledPosting.objects.filter(pk=row.pk).update(scheduled_for=timezone.now())
    assert scheduling.post_due().posted == 1
    row.refresh_from_db()
    assert row.status == "POSTED", row.error
    assert row.rate == {**terms, "toleranceBps": 1_200}
    assert row.transaction.conversion["rate"]["amount"] == 19
    assert row.transaction.conversion["delivered"]["amount"] == 19


def test_a_refused_conversion_leaves_no_conversion_account(fx):
    fx.rate("BRL", "USD", 18, 2)
    assert_error(fx.exchange(10**9), 422, "0018")  # more than @alice holds
    assert not Account.objects.filter(alias__startswith="@conversion/").exists()
    assert fx.exchange(100).status_code == 201
    assert Account.objects.filter(alias__startswith="@conversion/").count() == 2


def test_deleting_an_instrument_takes_its_conversion_account_along(fx):
    fx.rate("BRL", "USD", 18, 2)
    body = fx.exchange(1_000).json()
    revert = fx.book.api.post(f"{fx.book.url}/transactions/{body['id']}/revert")
    assert revert.status_code == 201, revert.content
    usd = fx.book.api.get(f"{fx.book.url}/instruments").json()
    (dollar,) = [i for i in usd if i["code"] == "USD"]
    fx.book.api.delete(f"{fx.book.url}/accounts/{fx.book.accounts['@usd']['id']}")
    fx.book.api.delete(f"{fx.book.url}/accounts/{fx.book.accounts['@usd2']['id']}")
    deleted = fx.book.api.delete(f"{fx.book.url}/instruments/{dollar['id']}")
    assert deleted.status_code == 204, deleted.content
    account = Account.objects.get(alias="@conversion/USD")
    assert account.deleted_at is not None
    assert Account.objects.get(alias="@conversion/BRL").deleted_at is None


def test_only_conversions_move_conversion_accounts(fx):
    fx.rate("BRL", "USD", 18, 2)
    assert fx.exchange(100).status_code == 201
    named = """
(transaction-template v1 (chart-of-accounts-group-name G) (code MINT)
  (send BRL $amount|2 (source (from @conversion/BRL :amount BRL $amount|2)))
  (distribute (to $account :amount BRL $amount|2)))
"""
    url = f"{fx.book.url}/transaction-templates"
    response = fx.book.api.post(url, named, content_type="text/plain")
    assert_error(response, 400, "0017")
    assert response.json()["description"].startswith("line 3, column 37: @conversion/BRL:")
    paid = fx.book.pay(100, 0, destination="@conversion/BRL")
    assert_error(paid, 400, "0047")
    assert paid.json()["fields"] == {
        "variables.destination": "a conversion account moves only through a conversion"
    }


def test_a_client_account_with_a_conversion_alias_is_never_converted_through(fx):
    fx.rate("BRL", "USD", 18, 2)
    # Made before the aliases were reserved (the API refuses it now): written past the service.
    legacy = Account.objects.get(alias="@bob")
    Account.objects.filter(pk=legacy.pk).update(alias="@conversion/BRL")
    refused = fx.exchange(100)
    assert_error(refused, 422, "0008")
    assert "rename that account" in refused.json()["description"]
    assert fx.book.balance("@conversion/BRL")["available"] == 0


def test_pins_and_expectations_apply_to_an_inverse_rate_as_applied(fx):
    inverse = fx.rate("USD", "BRL", 5, 0)  # applied as 0.2 USD per BRL
    pinned = fx.exchange(1_000, rate={"id": inverse["id"], "expected": {"amount": 2, "scale": 1}})
    assert pinned.status_code == 201, pinned.content
    assert pinned.json()["conversion"]["rate"]["direction"] == "INVERSE"
    stored_way = fx.exchange(1_000, rate={"expected": {"amount": 5, "scale": 0}})
    assert_error(stored_way, 422, "0128")  # 5 is the stored value, not the one applied


def test_an_unchanged_value_confirmed_again_is_as_old_as_its_confirmation(fx):
    rate = fx.rate("BRL", "USD", 18, 2)
    assert fx.book.api.patch(fx.book.url, {"maxRateAgeSeconds": 60}).status_code == 200
    RateValue.objects.filter(rate_id=rate["id"]).update(
        valid_from=timezone.now() - dt.timedelta(seconds=61)
    )
    assert_error(fx.exchange(100), 422, "0127")
    url = f"{fx.book.url}/asset-rates/{rate['id']}"
    assert fx.book.api.patch(url, {"metadata": {"seen": "yes"}}).status_code == 200
    assert_error(fx.exchange(100), 422, "0127")  # metadata is not the value
    assert fx.book.api.patch(url, {"amount": 18}).status_code == 200
    assert fx.exchange(100).status_code == 201
    assert RateValue.objects.filter(rate_id=rate["id"]).count() == 2


def test_a_rate_set_inactive_converts_nothing(fx):
    rate = fx.rate("BRL", "USD", 18, 2)
    url = f"{fx.book.url}/asset-rates/{rate['id']}"
    assert fx.book.api.patch(url, {"status": {"code": "INACTIVE"}}).status_code == 200
    assert_error(fx.exchange(100), 422, "0126")
    assert fx.book.api.patch(url, {"status": {"code": "ACTIVE"}}).status_code == 200
    assert fx.exchange(100).status_code == 201


def test_batch_items_take_rate_terms(fx):
    fx.rate("BRL", "USD", 18, 2)
    item = {
        "transactionTypeCode": "EXCHANGE",
        "variables": {"amount": 100, "source": "@alice", "destination": "@usd"},
    }
    batch = {
        "atomic": False,
        "transactions": [
            {**item, "rate": {"expected": {"amount": 18, "scale": 2}}},
            {**item, "rate": {"expected": {"amount": 19, "scale": 2}}},
        ],
    }
    response = fx.book.api.post(f"{fx.book.url}/transactions/batch", batch)
    assert response.status_code == 200, response.content
    assert [i["status"] for i in response.json()] == [201, 422]
    assert response.json()[1]["error"]["code"] == "0128"


def test_the_back_office_sets_a_ledgers_maximum_rate_age(admin_client, fx):
    ledger = ledger_of(fx.book)
    page = admin_client.get(f"/admin/organizations/ledger/{ledger.pk}/change/").content.decode()
    assert 'name="max_rate_age"' in page and "max rate age (seconds)" in page.lower()


def test_a_deleted_rate_still_converts_before_its_delete(fx):
    rate = fx.rate("BRL", "USD", 18, 2)
    then = _next_whole_second()
    assert fx.book.api.delete(f"{fx.book.url}/asset-rates/{rate['id']}").status_code == 204
    assert_error(fx.exchange(100), 422, "0126")
    before = fx.exchange(100, effectiveAt=render_timestamp(then))
    assert before.status_code == 201, before.content
    assert before.json()["conversion"]["rate"]["id"] == rate["id"]


def test_a_back_office_rule_on_the_delivered_asset_holds_a_conversion(admin_client, fx):
    """A rule on USD holds a posting that sends BRL and delivers USD above its amount."""
    fx.rate("BRL", "USD", 2, 1)
    fx.book.post_template(EXCHANGE_FEE)
    ledger = ledger_of(fx.book)
    rule = {"action": "post", "asset_code": "USD", "above": 10_000, "above_scale": 3}
    ApprovalRule.objects.create(organization_id=ledger.organization_id, ledger=ledger, **rule)
    url = f"/admin/organizations/ledger/{ledger.pk}/post/"
    fields = {"template": "EXCHANGE_FEE", "var_amount": "100.00", "var_fee": "1.5",
              "var_source": "@alice", "var_destination": "@usd"}  # fmt: skip
    posted = admin_client.post(url, {**fields, "_post": "1", "reason": "Desk request"})
    assert posted.status_code == 302 and "/approval/" in posted["Location"]
    assert Approval.objects.get().status == "PENDING" and fx.available("@usd") == 0
