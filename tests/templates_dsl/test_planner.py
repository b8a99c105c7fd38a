"""Planner: legs from a template and variables, and every refusal with its error code."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledgerproject.amounts import MAX_AMOUNT
from ledgerproject.errors import ErrorCode, LedgerError
from templates_dsl.compile import compile_template
from templates_dsl.planner import Leg, PostingPlan, plan_posting
from tests.templates_dsl.test_parser import EXAMPLE, SPLIT

VARIABLES = {"amount": 1000, "fee": 50, "source": "@alice"}


def build(send: str, distribute: str, extra: str = "") -> str:
    return (
        "(transaction-template v1 (chart-of-accounts-group-name G) (code C)"
        f" {extra} {send} {distribute})"
    )


TWO_SOURCES = build(
    "(send BRL $total|2 (source (from @a :amount BRL $first|2) (from @b :amount BRL $second|2)))",
    "(distribute (to @c :amount BRL $paid|2) (distribute :remaining (to @d :remaining)))",
)
NO_REMAINING = build(
    "(send BRL $total|2 (source (from @a :amount BRL $total|2)))",
    "(distribute (to @c :amount BRL $paid|2))",
)


def refusal(text: str, variables: dict[str, object]) -> LedgerError:
    with pytest.raises(LedgerError) as caught:
        plan_posting(compile_template(text), variables)
    return caught.value


def test_it_plans_the_example():
    plan = plan_posting(compile_template(EXAMPLE), VARIABLES)
    assert plan == PostingPlan(
        code="PAYMENT_WITH_FEE",
        asset="BRL",
        scale=2,
        total=1050,
        description="Payment with fee",
        pending=False,
        metadata={"channel": "app", "note": "two words"},
        group_name="PAYMENTS",
        legs=(
            Leg(
                "@alice",
                "DEBIT",
                1050,
                "Pay 10.00 BRL plus fee 0.50 BRL",
                "PAYMENT_DEBIT",
                "BRL",
                2,
            ),
            Leg("@fees/platform", "CREDIT", 50, "Fee", "FEE_CREDIT", "BRL", 2),
            Leg("@external/BRL", "CREDIT", 1000, "", "PAYMENT_CREDIT", "BRL", 2),
        ),
    )


def test_it_drops_a_zero_leg():
    plan = plan_posting(compile_template(EXAMPLE), {**VARIABLES, "fee": 0})
    assert [(leg.alias, leg.direction, leg.amount) for leg in plan.legs] == [
        ("@alice", "DEBIT", 1000),
        ("@external/BRL", "CREDIT", 1000),
    ]
    assert plan.legs[0].description == "Pay 10.00 BRL plus fee 0.00 BRL"


def test_it_drops_a_zero_remainder():
    plan = plan_posting(compile_template(EXAMPLE), {**VARIABLES, "amount": 0})
    assert [(leg.alias, leg.amount) for leg in plan.legs] == [
        ("@alice", 50),
        ("@fees/platform", 50),
    ]


def test_it_accepts_dollar_prefixed_keys_and_digit_strings():
    plan = plan_posting(
        compile_template(EXAMPLE), {"$amount": "1000", "$fee": "050", "$source": "@alice"}
    )
    assert plan.total == 1050
    assert plan.legs[1].amount == 50


def test_it_takes_pending_literals_and_the_top_level_description():
    plan = plan_posting(compile_template(SPLIT), {"price": 900, "seller": "@bob"})
    assert plan.pending is True
    assert plan.description is None
    assert plan.metadata == {}
    assert plan.total == 1000
    assert [
        (leg.alias, leg.direction, leg.amount, leg.description, leg.chart_of_accounts)
        for leg in plan.legs
    ] == [
        ("@buyer", "DEBIT", 900, "price", "BUY"),
        ("@shipping", "DEBIT", 100, "", ""),
        ("@bob", "CREDIT", 900, "to @bob", ""),
        ("@carrier", "CREDIT", 100, "", ""),
    ]


def test_it_replaces_longer_names_first_in_every_description():
    text = build(
        "(send BRL $fee+$feeTotal|0 (source (from $feeAccount :amount BRL $fee+$feeTotal|0"
        ' (description "$feeAccount pays $fee and $feeTotal"))))',
        "(distribute (to @x :amount BRL $fee|0) (to @x :amount BRL $feeTotal|0))",
        '(description "fee $fee from $feeAccount")',
    )
    plan = plan_posting(compile_template(text), {"fee": 1, "feeTotal": 2, "feeAccount": "@acc"})
    assert plan.legs[0].description == "@acc pays 1 BRL and 2 BRL"
    assert plan.description == "fee 1 BRL from @acc"
    assert [(leg.alias, leg.amount) for leg in plan.legs[1:]] == [("@x", 1), ("@x", 2)]


def test_it_allows_one_alias_twice_on_the_same_side():
    plan = plan_posting(
        compile_template(TWO_SOURCES),
        {"total": 10, "first": 4, "second": 6, "paid": 10},
    )
    assert [leg.direction for leg in plan.legs] == ["DEBIT", "DEBIT", "CREDIT"]


def test_it_refuses_a_variable_given_with_and_without_dollar():
    error = refusal(EXAMPLE, {**VARIABLES, "$fee": 50})
    assert error.error is ErrorCode.BAD_REQUEST
    assert error.fields == {"variables.fee": "given both as fee and as $fee"}


def test_it_refuses_missing_variables_with_0009():
    error = refusal(EXAMPLE, {"amount": 1})
    assert error.error is ErrorCode.MISSING_FIELDS
    assert error.fields == {
        "variables.fee": "required by the template",
        "variables.source": "required by the template",
    }


def test_it_refuses_unused_variables_with_0053():
    error = refusal(EXAMPLE, {**VARIABLES, "$tip": 3})
    assert error.error is ErrorCode.UNEXPECTED_FIELDS
    assert error.fields == {"variables.tip": "not used by the template"}


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (-1, "must not be negative"),
        ("-1", "must be a non-negative integer or a string of digits"),
        (1.0, "must be a non-negative integer or a string of digits"),
        ("1.5", "must be a non-negative integer or a string of digits"),
        ("abc", "must be a non-negative integer or a string of digits"),
        ("", "must be a non-negative integer or a string of digits"),
        (" 5", "must be a non-negative integer or a string of digits"),
        ("\uff15", "must be a non-negative integer or a string of digits"),
        (True, "must be a non-negative integer or a string of digits"),
        (None, "must be a non-negative integer or a string of digits"),
        ([5], "must be a non-negative integer or a string of digits"),
        (10**38, f"must be at most {MAX_AMOUNT}"),
        (str(10**38), f"must be at most {MAX_AMOUNT}"),
        ("9" * 5000, f"must be at most {MAX_AMOUNT}"),
    ],
)
def test_it_refuses_bad_amounts_with_0047(value, message):
    error = refusal(EXAMPLE, {**VARIABLES, "fee": value})
    assert error.error is ErrorCode.BAD_REQUEST
    assert error.http_status == 400
    assert error.fields == {"variables.fee": message}


def test_it_accepts_the_largest_variable_amount():
    fee = MAX_AMOUNT - 1000
    plan = plan_posting(compile_template(EXAMPLE), {**VARIABLES, "fee": str(fee)})
    assert plan.total == MAX_AMOUNT


@pytest.mark.parametrize("value", ["alice", "@", "@" + "a" * 101, "@a b", "@a\n", 5, None])
def test_it_refuses_bad_account_aliases_with_0047(value):
    error = refusal(EXAMPLE, {**VARIABLES, "source": value})
    assert error.error is ErrorCode.BAD_REQUEST
    assert error.fields == {"variables.source": "must be an account alias such as @alice"}


def test_it_refuses_an_amount_above_the_38_digit_limit():
    text = build(
        f"(send BRL {MAX_AMOUNT}+$a|0 (source (from @a :amount BRL $a|0)))",
        "(distribute (to @b :amount BRL $a|0))",
    )
    error = refusal(text, {"a": 1})
    assert error.error is ErrorCode.BAD_REQUEST
    assert error.fields == {"variables.a": "makes an amount too large"}


def test_it_refuses_nothing_to_send_with_0073():
    error = refusal(EXAMPLE, {**VARIABLES, "amount": 0, "fee": 0})
    assert error.error is ErrorCode.TRANSACTION_VALUE_MISMATCH
    assert error.http_status == 422
    assert "Nothing to send" in error.description


def test_it_refuses_sources_that_do_not_add_up_with_0073():
    error = refusal(TWO_SOURCES, {"total": 10, "first": 4, "second": 5, "paid": 1})
    assert error.error is ErrorCode.TRANSACTION_VALUE_MISMATCH
    assert error.description == "The sources add up to 9 but the amount sent is 10."


def test_it_refuses_destinations_above_the_amount_with_0073():
    error = refusal(TWO_SOURCES, {"total": 10, "first": 4, "second": 6, "paid": 11})
    assert error.error is ErrorCode.TRANSACTION_VALUE_MISMATCH
    assert error.description == "The destinations add up to 11, more than the amount sent, 10."


def test_it_refuses_a_remainder_without_a_remaining_destination_with_0073():
    error = refusal(NO_REMAINING, {"total": 10, "paid": 7})
    assert error.error is ErrorCode.TRANSACTION_VALUE_MISMATCH
    assert "other 3" in error.description
    plan = plan_posting(compile_template(NO_REMAINING), {"total": 10, "paid": 10})
    assert [leg.amount for leg in plan.legs] == [10, 10]


def test_it_refuses_an_account_on_both_sides_with_0090():
    error = refusal(EXAMPLE, {**VARIABLES, "source": "@fees/platform"})
    assert error.error is ErrorCode.AMBIGUOUS_ACCOUNT
    assert error.fields == {"variables.source": "@fees/platform is both a source and a destination"}
    plan = plan_posting(
        compile_template(EXAMPLE), {**VARIABLES, "source": "@fees/platform", "fee": 0}
    )
    assert [leg.alias for leg in plan.legs] == ["@fees/platform", "@external/BRL"]


@settings(max_examples=150, deadline=None)
@given(
    amount=st.integers(-5, 10**19) | st.sampled_from(["7", "x", None]),
    fee=st.integers(0, 3000),
    source=st.sampled_from(["@alice", "@fees/platform", "@external/BRL", "bad"]),
)
def test_it_balances_every_plan_or_refuses_with_a_catalogue_error(amount, fee, source):
    template = compile_template(EXAMPLE)
    try:
        plan = plan_posting(template, {"amount": amount, "fee": fee, "source": source})
    except LedgerError as error:
        assert error.error in {
            ErrorCode.BAD_REQUEST,
            ErrorCode.TRANSACTION_VALUE_MISMATCH,
            ErrorCode.AMBIGUOUS_ACCOUNT,
        }
        return
    debits = sum(leg.amount for leg in plan.legs if leg.direction == "DEBIT")
    credits = sum(leg.amount for leg in plan.legs if leg.direction == "CREDIT")
    assert debits == credits == plan.total > 0
    assert all(leg.amount > 0 for leg in plan.legs)
