"""Robustness: random text and mutated templates only ever raise TemplateError or the 0049 error."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from ledgerproject.errors import ErrorCode, LedgerError
from templates_dsl.checks import check_template
from templates_dsl.errors import TemplateError
from templates_dsl.formatter import format_template
from templates_dsl.parser import parse
from tests.templates_dsl.test_parser import SAMPLES

VOCABULARY = [
    "(",
    ")",
    "transaction-template",
    "v1",
    "chart-of-accounts-group-name",
    "metadata",
    "code",
    "description",
    "pending",
    "hold-duration",
    "send",
    "source",
    "from",
    "distribute",
    "to",
    "chart-of-accounts",
    ":amount",
    ":remaining",
    "$amount",
    "@alias",
    "BRL",
    "2",
    "19",
    "|",
    "+",
    "true",
    '"text $amount"',
    '"unterminated',
    "; comment\n",
    "\n",
    ":",
    "$",
    "@",
    "\\",
    "é",
]
TOKEN_RE = re.compile(r'"(?:[^"\\\n]|\\.)*"|[()]|[^\s()]+|\s+')
ALPHABET = '()$@:|+;"\\ \n\t-_./abcdefmnoprstuv01289BRL'


def assert_refused_cleanly(text: str) -> None:
    try:
        template = parse(text)
        check_template(template)
    except TemplateError as error:
        assert error.error is ErrorCode.INVALID_SCRIPT
        assert error.line >= 1
        assert error.column >= 1
        assert error.description.startswith(f"line {error.line}, column {error.column}: ")
        return
    except LedgerError as error:
        assert error.error is ErrorCode.EMPTY_DSL
        assert not text.strip() or text.lstrip().startswith(";")
        return
    assert parse(format_template(template)) == template


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80) | st.text(alphabet=ALPHABET, max_size=120))
def test_it_survives_random_text(text):
    assert_refused_cleanly(text)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(VOCABULARY), max_size=40).map(" ".join))
def test_it_survives_random_token_soup(text):
    assert_refused_cleanly(text)


@settings(max_examples=250, deadline=None)
@given(st.sampled_from(SAMPLES), st.data())
def test_it_survives_character_mutations(sample, data):
    text = sample
    for _ in range(data.draw(st.integers(1, 4))):
        index = data.draw(st.integers(0, len(text)))
        operation = data.draw(st.sampled_from(["delete", "insert", "swap"]))
        if operation == "delete":
            text = text[:index] + text[index + data.draw(st.integers(1, 5)) :]
        elif operation == "insert":
            text = text[:index] + data.draw(st.sampled_from(ALPHABET)) + text[index:]
        elif len(text) > 1:
            other = data.draw(st.integers(0, len(text) - 1))
            chars = list(text)
            i, j = sorted((min(index, len(text) - 1), other))
            chars[i], chars[j] = chars[j], chars[i]
            text = "".join(chars)
    assert_refused_cleanly(text)


@settings(max_examples=250, deadline=None)
@given(st.sampled_from(SAMPLES), st.data())
def test_it_survives_token_mutations(sample, data):
    tokens = TOKEN_RE.findall(sample)
    for _ in range(data.draw(st.integers(1, 3))):
        index = data.draw(st.integers(0, len(tokens) - 1))
        operation = data.draw(st.sampled_from(["delete", "duplicate", "swap", "replace"]))
        if operation == "delete":
            del tokens[index]
        elif operation == "duplicate":
            tokens.insert(index, tokens[index])
        elif operation == "swap":
            other = data.draw(st.integers(0, len(tokens) - 1))
            tokens[index], tokens[other] = tokens[other], tokens[index]
        else:
            tokens[index] = " " + data.draw(st.sampled_from(VOCABULARY)) + " "
        if not tokens:
            break
    assert_refused_cleanly("".join(tokens))
