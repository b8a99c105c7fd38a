"""Lexer units: token kinds, values, positions, comments, and character-level errors."""

from __future__ import annotations

import pytest

from templates_dsl.ast import Span
from templates_dsl.errors import TemplateError
from templates_dsl.lexer import tokenize


def kinds(text: str) -> list[tuple[str, str]]:
    return [(token.type, token.value.text) for token in tokenize(text)]


def test_it_recognises_every_keyword():
    text = (
        "transaction-template chart-of-accounts-group-name metadata code description pending "
        "send source from distribute to chart-of-accounts true false v1 V1"
    )
    assert [kind for kind, _ in kinds(text)] == [
        "TRANSACTION_TEMPLATE",
        "GROUP_NAME",
        "METADATA",
        "CODE",
        "DESCRIPTION",
        "PENDING",
        "SEND",
        "SOURCE",
        "FROM",
        "DISTRIBUTE",
        "TO",
        "CHART_OF_ACCOUNTS",
        "TRUE",
        "FALSE",
        "VERSION",
        "VERSION",
    ]


def test_it_recognises_punctuation_variables_aliases_names_and_integers():
    assert kinds("( ) + | :amount :remaining $fee_2 @fees/platform.x-y BRL a.b/c-d 0042") == [
        ("LPAREN", "("),
        ("RPAREN", ")"),
        ("PLUS", "+"),
        ("PIPE", "|"),
        ("AMOUNT", ":amount"),
        ("REMAINING", ":remaining"),
        ("VARIABLE", "$fee_2"),
        ("ALIAS", "@fees/platform.x-y"),
        ("NAME", "BRL"),
        ("NAME", "a.b/c-d"),
        ("INTEGER", "0042"),
    ]


def test_it_keeps_keywords_case_sensitive_and_whole():
    assert kinds("SEND sender v2 true1") == [
        ("NAME", "SEND"),
        ("NAME", "sender"),
        ("NAME", "v2"),
        ("NAME", "true1"),
    ]


def test_it_splits_amounts_without_spaces():
    assert kinds("$a+$b|2") == [
        ("VARIABLE", "$a"),
        ("PLUS", "+"),
        ("VARIABLE", "$b"),
        ("PIPE", "|"),
        ("INTEGER", "2"),
    ]


def test_it_unescapes_strings():
    assert kinds(r'"a \"b\" \\ c\nd\te ; not a comment"') == [
        ("STRING", 'a "b" \\ c\nd\te ; not a comment')
    ]
    assert kinds('""') == [("STRING", "")]


def test_it_skips_comments_and_tracks_lines_and_columns():
    tokens = tokenize('; first line\n  (code ; comment ( "\n\n\t X)')
    assert [(t.type, t.value.span) for t in tokens] == [
        ("LPAREN", Span(2, 3)),
        ("CODE", Span(2, 4)),
        ("NAME", Span(4, 3)),
        ("RPAREN", Span(4, 4)),
    ]


@pytest.mark.parametrize(
    ("text", "line", "column", "message"),
    [
        ("(code\n  x%)", 2, 4, "unexpected character '%'"),
        ("(code é)", 1, 7, "unexpected character 'é'"),
        (
            '(description\n "never closed)',
            2,
            2,
            "unterminated string; expected a closing '\"' on the same line",
        ),
        (
            '(description "two\nlines")',
            1,
            14,
            "unterminated string; expected a closing '\"' on the same line",
        ),
        (
            '(description "a \\q")',
            1,
            17,
            "unknown escape '\\q'; expected \\\", \\\\, \\n or \\t",
        ),
        ("(to @a :amounts)", 1, 8, "unexpected ':'; expected ':amount' or ':remaining'"),
        ("(send BRL $1|2)", 1, 11, "unexpected '$'; expected a variable such as $amount"),
        ("(to @ :remaining)", 1, 5, "unexpected '@'; expected an alias such as @alias"),
        (
            "(to @" + "a" * 101 + ")",
            1,
            5,
            "alias '@aaaaaaaaaaaaaaaaaaa...' is longer than 100 characters",
        ),
    ],
)
def test_it_reports_bad_characters_by_position(text, line, column, message):
    with pytest.raises(TemplateError) as caught:
        tokenize(text)
    assert (caught.value.line, caught.value.column, caught.value.message) == (
        line,
        column,
        message,
    )


def test_it_accepts_an_alias_of_exactly_100_characters():
    assert kinds("@" + "a" * 100) == [("ALIAS", "@" + "a" * 100)]
