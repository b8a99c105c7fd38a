"""Static checks: each refusal at the offending node's position, and the first one in text order."""

from __future__ import annotations

import pytest

from templates_dsl import ast
from templates_dsl.checks import check_template
from templates_dsl.errors import TemplateError
from templates_dsl.parser import parse
from tests.templates_dsl.test_parser import EXAMPLE, SAMPLES


def check_error(text: str) -> TemplateError:
    with pytest.raises(TemplateError) as caught:
        check_template(parse(text))
    return caught.value


@pytest.mark.parametrize("text", SAMPLES)
def test_it_accepts_the_sample_templates(text):
    check_template(parse(text))


@pytest.mark.parametrize(
    ("old", "new", "line", "column", "message"),
    [
        (
            ":amount BRL $fee|2",
            ":amount USD $fee|2",
            12,
            32,
            "asset 'USD'; expected the send asset BRL",
        ),
        (
            "(from $source :amount BRL $amount+$fee|2",
            "(from $source :amount BRL $amount+$fee|3",
            8,
            46,
            "scale 3; expected the send scale 2",
        ),
        (
            "(send BRL $amount+$fee|2",
            "(send BRL $amount+$fee|19",
            6,
            26,
            "scale 19; expected a scale from 0 to 18",
        ),
        (
            "(send BRL",
            "(send brl",
            6,
            9,
            "asset 'brl'; expected an asset code of upper-case letters and digits",
        ),
        (
            "(to @fees/platform :amount BRL $fee|2",
            "(to @fees/platform :remaining",
            12,
            5,
            "':remaining' outside (distribute :remaining ...); expected ':amount ASSET AMOUNT'",
        ),
        (
            '(description "Fee")',
            '(description "Fee $fees")',
            13,
            7,
            "undeclared variable $fees in description; expected one of $amount, $fee, $source",
        ),
        (
            '(description "Payment with fee")',
            '(description "Payment by $payer")',
            5,
            3,
            "undeclared variable $payer in description; expected one of $amount, $fee, $source",
        ),
        (
            "(to @external/BRL :remaining",
            "(to $fee :remaining",
            16,
            11,
            "$fee is used both as an amount and as an account; "
            "expected a separate variable for each",
        ),
        (
            "(metadata (channel app) (note",
            "(metadata (channel app) (channel",
            3,
            27,
            "duplicate metadata key 'channel'; expected each key once",
        ),
        (
            "(channel app)",
            "(" + "k" * 101 + " app)",
            3,
            13,
            "metadata key longer than 100 characters",
        ),
        (
            '(note "two words")',
            '(note "' + "v" * 2001 + '")',
            3,
            27,
            "metadata value longer than 2000 characters",
        ),
    ],
)
def test_it_refuses_at_the_offending_node(old, new, line, column, message):
    assert old in EXAMPLE
    error = check_error(EXAMPLE.replace(old, new))
    assert (error.line, error.column, error.message) == (line, column, message)
    assert error.description == f"line {line}, column {column}: {message}"


def test_it_ignores_dollar_signs_that_are_not_variable_names():
    check_template(parse(EXAMPLE.replace('"Fee"', '"Fee of $5, $ or $$"')))


def test_it_requires_at_least_one_source_and_one_destination():
    text = EXAMPLE.replace(
        """
      (from $source :amount BRL $amount+$fee|2
        (description "Pay $amount plus fee $fee")
        (chart-of-accounts PAYMENT_DEBIT))""",
        "",
    )
    error = check_error(text.replace('"Pay $amount plus fee $fee"', '"x"'))
    assert (error.line, error.column) == (6, 3)
    assert error.message == "(source) holds no (from ...); expected at least one"
    head = EXAMPLE.split("  (distribute")[0]
    error = check_error(head + "  (distribute))")
    assert (error.line, error.column) == (11, 3)
    assert error.message == ("(distribute) holds no (to ...); expected at least one destination")


def test_it_reports_the_first_problem_in_text_order():
    text = EXAMPLE.replace(":amount BRL $fee|2", ":amount USD $fee|2").replace(
        "(send BRL $amount+$fee|2", "(send BRL $amount+$fee|19"
    )
    error = check_error(text)
    assert (error.line, error.column) == (6, 26)


def test_it_checks_hand_built_trees_too():
    template = parse(EXAMPLE)
    remaining = template.distribute.remaining
    assert remaining is not None
    bad = ast.To(
        account=remaining.account,
        asset="BRL",
        amount=template.send.amount,
    )
    with pytest.raises(TemplateError) as caught:
        check_template(
            ast.Template(
                group_name="G",
                code="C",
                send=template.send,
                distribute=ast.Distribute(tos=template.distribute.tos, remaining=bad),
            )
        )
    assert caught.value.message.startswith("a (to ... :amount ...) inside")
    with pytest.raises(TemplateError) as caught:
        check_template(
            ast.Template(
                group_name="G",
                code="C",
                send=ast.Send(
                    asset="BRL",
                    amount=ast.Amount(terms=(ast.Term(literal=-1),), scale=2),
                    sources=template.send.sources,
                ),
                distribute=template.distribute,
            )
        )
    assert caught.value.message == f"amount -1; expected 0 to {'9' * 38}"
