"""Parser units: every element, free layout, keyword-spelled names, syntax errors by position."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ledgerproject.errors import ErrorCode, LedgerError
from templates_dsl import ast
from templates_dsl.errors import TemplateError
from templates_dsl.parser import parse

EXAMPLE = """\
(transaction-template v1
  (chart-of-accounts-group-name PAYMENTS)
  (metadata (channel app) (note "two words"))
  (code PAYMENT_WITH_FEE)
  (description "Payment with fee")
  (send BRL $amount+$fee|2
    (source
      (from $source :amount BRL $amount+$fee|2
        (description "Pay $amount plus fee $fee")
        (chart-of-accounts PAYMENT_DEBIT))))
  (distribute
    (to @fees/platform :amount BRL $fee|2
      (description "Fee")
      (chart-of-accounts FEE_CREDIT))
    (distribute :remaining
      (to @external/BRL :remaining
        (chart-of-accounts PAYMENT_CREDIT)))))
"""

SPLIT = """\
; a payment split between two sellers, with literal terms and a pending flag
(transaction-template V1
  (send USD $price+100|2 (source
    (from @buyer :amount USD $price|2 (chart-of-accounts BUY) (description "price"))
    (from @shipping :amount USD 100|2)))
  (pending true)
  (code SPLIT)
  (distribute
    (to $seller :amount USD $price|2 (description "to $seller"))
    (to @carrier :amount USD 60 + 40 | 2))
  (chart-of-accounts-group-name SALES))
"""

KEYWORD_NAMES = """\
(transaction-template v1
  (chart-of-accounts-group-name 123)
  (metadata (code to) (007 v1) (n 12) (zero 0) (padded 007) (yes true) (no false)
            (send "a \\"quoted\\" \\\\ value\\n\\twith escapes"))
  (code send)
  (send BRL $x|0 (source (from @a :amount BRL $x|0 (chart-of-accounts distribute))))
  (distribute (distribute :remaining (to @b :remaining (description "all of $x")
    (chart-of-accounts chart-of-accounts)))))
"""

ONE_LINE = " ".join(line.strip() for line in EXAMPLE.splitlines())

SAMPLES = [EXAMPLE, SPLIT, KEYWORD_NAMES, ONE_LINE]


def expected_example() -> ast.Template:
    amount = ast.Amount(terms=(ast.Term(variable="amount"), ast.Term(variable="fee")), scale=2)
    return ast.Template(
        group_name="PAYMENTS",
        metadata=(("channel", "app"), ("note", "two words")),
        code="PAYMENT_WITH_FEE",
        description="Payment with fee",
        send=ast.Send(
            asset="BRL",
            amount=amount,
            sources=(
                ast.From(
                    account=ast.AccountRef(variable="source"),
                    asset="BRL",
                    amount=amount,
                    description="Pay $amount plus fee $fee",
                    chart_of_accounts="PAYMENT_DEBIT",
                ),
            ),
        ),
        distribute=ast.Distribute(
            tos=(
                ast.To(
                    account=ast.AccountRef(alias="@fees/platform"),
                    asset="BRL",
                    amount=ast.Amount(terms=(ast.Term(variable="fee"),), scale=2),
                    description="Fee",
                    chart_of_accounts="FEE_CREDIT",
                ),
            ),
            remaining=ast.To(
                account=ast.AccountRef(alias="@external/BRL"),
                remaining=True,
                chart_of_accounts="PAYMENT_CREDIT",
            ),
        ),
    )


def error_of(text: str) -> TemplateError:
    with pytest.raises(TemplateError) as caught:
        parse(text)
    return caught.value


def test_it_parses_the_example():
    assert parse(EXAMPLE) == expected_example()


def test_it_records_positions_without_comparing_them():
    template = parse(EXAMPLE)
    assert template.span == ast.Span(1, 1)
    assert template.send.span == ast.Span(6, 3)
    assert template.send.asset_span == ast.Span(6, 9)
    assert template.send.amount.span == ast.Span(6, 13)
    assert template.send.amount.scale_span == ast.Span(6, 26)
    source = template.send.sources[0]
    assert source.span == ast.Span(8, 7)
    assert source.account.span == ast.Span(8, 13)
    assert source.description_span == ast.Span(9, 9)
    assert template.distribute.remaining is not None
    assert template.distribute.remaining.span == ast.Span(16, 7)
    assert template.metadata_spans == (ast.Span(3, 13), ast.Span(3, 27))
    assert template.description_span == ast.Span(5, 3)


def test_it_lists_amount_and_account_variables_in_order_without_duplicates():
    template = parse(SPLIT)
    assert template.amount_variables() == ("price",)
    assert template.account_variables() == ("seller",)
    assert parse(EXAMPLE).amount_variables() == ("amount", "fee")
    assert parse(EXAMPLE).account_variables() == ("source",)


def test_it_accepts_everything_on_one_line():
    assert "\n" not in ONE_LINE
    assert parse(ONE_LINE) == parse(EXAMPLE)


def test_it_accepts_extra_newlines_comments_and_windows_line_endings():
    text = "\n\n; leading comment\n" + EXAMPLE.replace("\n", " ; trailing comment\n\n")
    assert parse(text) == parse(EXAMPLE)
    assert parse(EXAMPLE.replace("\n", "\r\n")) == parse(EXAMPLE)


def test_it_accepts_the_upper_case_version_marker_and_elements_in_any_order():
    template = parse(SPLIT)
    assert template.version == "v1"
    assert template.code == "SPLIT"
    assert template.group_name == "SALES"
    assert template.pending is True
    assert template.description is None
    assert template.metadata == ()


def test_it_parses_literal_terms_sums_and_spaces_around_operators():
    template = parse(SPLIT)
    assert template.send.amount == ast.Amount(
        terms=(ast.Term(variable="price"), ast.Term(literal=100)), scale=2
    )
    carrier = template.distribute.tos[1]
    assert carrier.amount == ast.Amount(terms=(ast.Term(literal=60), ast.Term(literal=40)), scale=2)
    assert carrier.description is None
    assert carrier.chart_of_accounts is None
    assert template.distribute.remaining is None


def test_it_parses_options_in_any_order_and_account_variables():
    template = parse(SPLIT)
    buyer = template.send.sources[0]
    assert buyer.account == ast.AccountRef(alias="@buyer")
    assert (buyer.description, buyer.chart_of_accounts) == ("price", "BUY")
    seller = template.distribute.tos[0]
    assert seller.account == ast.AccountRef(variable="seller")
    assert seller.description == "to $seller"


def test_it_accepts_names_spelled_like_keywords_or_digits():
    template = parse(KEYWORD_NAMES)
    assert template.group_name == "123"
    assert template.code == "send"
    assert template.send.sources[0].chart_of_accounts == "distribute"
    assert template.distribute.tos == ()
    assert template.distribute.remaining is not None
    assert template.distribute.remaining.chart_of_accounts == "chart-of-accounts"
    assert template.metadata == (
        ("code", "to"),
        ("007", "v1"),
        ("n", 12),
        ("zero", 0),
        ("padded", "007"),
        ("yes", True),
        ("no", False),
        ("send", 'a "quoted" \\ value\n\twith escapes'),
    )


def test_it_parses_pending_false_and_an_empty_metadata_list():
    text = EXAMPLE.replace("(code PAYMENT_WITH_FEE)", "(code P) (pending false) (metadata)")
    text = text.replace('(metadata (channel app) (note "two words"))', "")
    template = parse(text)
    assert template.pending is False
    assert template.metadata == ()


def test_it_has_a_grammar_without_conflicts():
    """SLY reports each conflict of a grammar on standard error as it builds the parser: the
    module, imported on its own, reports none."""
    done = subprocess.run(
        [sys.executable, "-c", "import templates_dsl.parser"],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
        check=True,
    )
    assert done.stderr == ""


def test_a_syntax_error_expects_what_the_parser_can_take_there():
    """What an error says is expected comes from the parser itself (each token tried from
    where it stopped): after the keyword ``code`` a name, after the first keyword the version.
    """
    assert error_of("(transaction-template v1 (code").message == (
        "unexpected end of the text; expected a name"
    )
    assert error_of("(transaction-template (code X)").message == (
        "unexpected '('; expected the version marker v1"
    )


@pytest.mark.parametrize("text", ["", "   \n\t\n", "; only a comment\n  ; and another"])
def test_it_refuses_empty_text_with_0049(text):
    with pytest.raises(LedgerError) as caught:
        parse(text)
    assert caught.value.error is ErrorCode.EMPTY_DSL
    assert not isinstance(caught.value, TemplateError)


def test_it_describes_an_unexpected_token_with_line_column_and_expectation():
    error = error_of("(transaction-template v1\n  (code X)\n  (send B)")
    assert (error.line, error.column) == (3, 10)
    assert error.message == "unexpected ')'; expected an amount such as $amount|2"
    assert error.description == "line 3, column 10: " + error.message
    assert error.error is ErrorCode.INVALID_SCRIPT
    assert error.as_body()["code"] == "0017"


@pytest.mark.parametrize(
    ("text", "line", "column", "message"),
    [
        (
            "(send BRL $a|2)",
            1,
            2,
            "unexpected 'send'; expected 'transaction-template'",
        ),
        (
            "(transaction-template v2)",
            1,
            23,
            "unexpected 'v2'; expected the version marker v1",
        ),
        (
            "(transaction-template v1\n (send BRL $a+)",
            2,
            15,
            "unexpected ')'; expected a variable or an integer after '+'",
        ),
        (
            "(transaction-template v1\n (send BRL $a 2)",
            2,
            15,
            "unexpected '2'; expected '+' or '|' and a scale, as in $amount|2",
        ),
        (
            "(transaction-template v1\n (send BRL $a|$b)",
            2,
            15,
            "unexpected '$b'; expected a scale such as 2",
        ),
        (
            "(transaction-template v1\n (send BRL $a|2 (source (from BRL",
            2,
            31,
            "unexpected 'BRL'; expected an account such as @alias or $variable",
        ),
        (
            "(transaction-template v1\n (send BRL $a|2 (source (from @a :remaining)))",
            2,
            34,
            "unexpected ':remaining'; expected ':amount'",
        ),
        (
            "(transaction-template v1 (pending yes))",
            1,
            35,
            "unexpected 'yes'; expected true or false",
        ),
        (
            "(transaction-template v1 (code))",
            1,
            31,
            "unexpected ')'; expected a name",
        ),
        (
            "(transaction-template v1 (metadata (k (x))))",
            1,
            39,
            "unexpected '('; expected a metadata value: a name, a quoted string, an integer, "
            "true or false",
        ),
        (
            "(transaction-template v1 (description unquoted))",
            1,
            39,
            "unexpected 'unquoted'; expected a quoted string such as \"text\"",
        ),
        (
            "(transaction-template v1 (distribute (distribute (to @a :remaining))))",
            1,
            50,
            "unexpected '('; expected ':remaining'",
        ),
        (
            "(transaction-template v1 (sand))",
            1,
            27,
            "unexpected 'sand'; expected 'chart-of-accounts-group-name', 'metadata', 'code', "
            "'description', 'pending', 'hold-duration', 'send', 'convert' or 'distribute'",
        ),
    ],
)
def test_it_reports_syntax_errors_at_the_offending_token(text, line, column, message):
    error = error_of(text)
    assert (error.line, error.column, error.message) == (line, column, message)


def test_it_reports_early_end_of_input_at_the_end_of_the_text():
    error = error_of("(transaction-template v1\n  (code X)\n  (send BRL $a")
    assert (error.line, error.column) == (3, 15)
    assert error.message.startswith("unexpected end of the text; expected '+' or '|'")
    error = error_of("(transaction-template v1\n  (code X)\n")
    assert (error.line, error.column) == (3, 1)
    assert error.message == "unexpected end of the text; expected '(' or ')'"


def test_it_refuses_text_after_the_template():
    error = error_of(EXAMPLE + "(code X)")
    assert (error.line, error.column) == (18, 1)
    assert error.message == "unexpected '('; expected the end of the text"


def test_it_reports_a_missing_element_at_the_closing_parenthesis():
    text = EXAMPLE.replace("  (code PAYMENT_WITH_FEE)\n", "")
    error = error_of(text)
    assert (error.line, error.column) == (16, 46)
    assert error.message == "missing (code ...); expected it before this ')'"
    error = error_of("(transaction-template v1)")
    assert (error.line, error.column) == (1, 25)
    assert error.message.startswith("missing (chart-of-accounts-group-name ...)")


@pytest.mark.parametrize(
    ("removed", "label"),
    [
        ("  (chart-of-accounts-group-name PAYMENTS)\n", "(chart-of-accounts-group-name ...)"),
        ("  (code PAYMENT_WITH_FEE)\n", "(code ...)"),
    ],
)
def test_it_requires_each_mandatory_element(removed, label):
    assert error_of(EXAMPLE.replace(removed, "")).message.startswith(f"missing {label}")


def test_it_requires_send_and_distribute():
    head = "(transaction-template v1 (chart-of-accounts-group-name G) (code C)"
    send = "(send BRL $a|2 (source (from @a :amount BRL $a|2)))"
    distribute = "(distribute (to @b :amount BRL $a|2))"
    assert error_of(f"{head} {distribute})").message.startswith("missing (send ...)")
    assert error_of(f"{head} {send})").message.startswith("missing (distribute ...)")
    assert parse(f"{head} {send} {distribute})").code == "C"


@pytest.mark.parametrize(
    ("element", "label"),
    [
        ("(code AGAIN)", "(code ...)"),
        ("(chart-of-accounts-group-name AGAIN)", "(chart-of-accounts-group-name ...)"),
        ("(metadata (a b))", "(metadata ...)"),
        ('(description "again")', "(description ...)"),
        ("(send BRL $a|2 (source))", "(send ...)"),
        ("(distribute)", "(distribute ...)"),
    ],
)
def test_it_refuses_duplicated_top_level_elements_at_the_second_one(element, label):
    text = EXAMPLE[:-2] + "\n  " + element + ")\n"
    error = error_of(text)
    assert (error.line, error.column) == (18, 3)
    assert error.message == f"duplicate {label}; expected at most one"


def test_it_refuses_a_second_pending():
    error = error_of(SPLIT.replace("(pending true)", "(pending true) (pending false)"))
    assert (error.line, error.column) == (6, 18)
    assert error.message == "duplicate (pending ...); expected at most one"


def test_it_refuses_duplicated_options_inside_from_and_to():
    text = EXAMPLE.replace('(description "Fee")', '(description "Fee") (description "x")')
    error = error_of(text)
    assert (error.line, error.column, error.message) == (
        13,
        27,
        "duplicate (description ...); expected at most one",
    )
    text = EXAMPLE.replace(
        "(chart-of-accounts PAYMENT_DEBIT)", "(chart-of-accounts A)\n(chart-of-accounts B)"
    )
    error = error_of(text)
    assert (error.line, error.column, error.message) == (
        11,
        1,
        "duplicate (chart-of-accounts ...); expected at most one",
    )


def test_it_refuses_two_remaining_blocks():
    text = EXAMPLE[:-3] + "\n    (distribute :remaining (to @x :remaining))))\n"
    error = error_of(text)
    assert (error.line, error.column) == (18, 5)
    assert error.message == "duplicate (distribute :remaining ...); expected at most one"


def test_it_refuses_two_tos_in_the_remaining_block():
    text = EXAMPLE.replace(
        "(chart-of-accounts PAYMENT_CREDIT))",
        "(chart-of-accounts PAYMENT_CREDIT))\n(to @y :remaining)",
    )
    error = error_of(text)
    assert (error.line, error.column) == (18, 1)
    assert error.message == (
        "a second (to ...) inside (distribute :remaining ...); expected exactly one"
    )


def test_it_refuses_an_amount_destination_in_the_remaining_block():
    text = EXAMPLE.replace("(to @external/BRL :remaining", "(to @external/BRL :amount BRL $fee|2")
    error = error_of(text)
    assert (error.line, error.column) == (16, 7)
    assert error.message.startswith("a (to ... :amount ...) inside (distribute :remaining ...)")


def test_it_refuses_an_empty_remaining_block():
    error = error_of(EXAMPLE.replace("(distribute :remaining", "(distribute :remaining)("))
    assert (error.line, error.column) == (15, 27)
    assert error.message == "unexpected ')'; expected '('"


def test_it_refuses_integers_larger_than_a_38_digit_amount():
    too_large = str(10**38)
    error = error_of(EXAMPLE.replace("$fee|2\n      (description", f"{too_large}|2\n (d"))
    assert (error.line, error.column) == (12, 36)
    assert error.message == f"amount '{too_large[:30]}' is larger than {'9' * 38}"
    error = error_of(EXAMPLE.replace("$fee|2", "$fee|" + "9" * 5000))
    assert error.message.startswith("scale '999")


def test_it_builds_a_fresh_parser_each_time():
    assert parse(EXAMPLE) == parse(EXAMPLE)
    with pytest.raises(TemplateError):
        parse(EXAMPLE[:-3])
    assert parse(EXAMPLE) == expected_example()


def test_it_parses_a_hold_duration():
    template = parse(SPLIT.replace("(pending true)", "(pending true)\n  (hold-duration 900)"))
    assert template.hold_duration == 900
    assert parse(SPLIT).hold_duration is None


@pytest.mark.parametrize(
    ("element", "column", "message"),
    [
        ("(hold-duration 0)", 16, "hold-duration must be from 1 to 31622400 seconds (366 days)"),
        ("(hold-duration 31622401)", 16, "hold-duration must be from 1"),
        ("(hold-duration $s)", 16, "unexpected '$s'; expected an integer"),
        ("(hold-duration 5) (hold-duration 6)", 19, "duplicate (hold-duration ...)"),
    ],
)
def test_it_refuses_a_bad_hold_duration_at_its_position(element, column, message):
    text = f"(transaction-template v1 {element})"
    error = error_of(text)
    assert (error.line, error.column) == (1, 25 + column)
    assert error.message.startswith(message)
