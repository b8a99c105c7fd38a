"""Formatter: the canonical text, and parse(format_template(tree)) == tree for any valid tree."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from templates_dsl import ast
from templates_dsl.formatter import format_template, quote
from templates_dsl.parser import parse
from tests.templates_dsl.test_parser import EXAMPLE, SAMPLES, SPLIT

MAX_INTEGER = 2**63 - 1

names = st.from_regex(r"[A-Za-z0-9_.\-/]{1,12}", fullmatch=True)
variables = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)
aliases = st.one_of(
    st.from_regex(r"@[A-Za-z0-9_\-/.]{1,16}", fullmatch=True),
    st.just("@" + "z" * 100),
)
texts = st.text(st.characters(exclude_characters="\x00"), max_size=24)  # the lexer refuses NUL
terms = st.one_of(
    variables.map(lambda name: ast.Term(variable=name)),
    st.integers(0, MAX_INTEGER).map(lambda value: ast.Term(literal=value)),
)
amounts = st.builds(
    lambda terms, scale: ast.Amount(terms=tuple(terms), scale=scale),
    st.lists(terms, min_size=1, max_size=3),
    st.integers(0, 40),
)
accounts = st.one_of(
    aliases.map(lambda alias: ast.AccountRef(alias=alias)),
    variables.map(lambda name: ast.AccountRef(variable=name)),
)
optional_texts = st.none() | texts
optional_names = st.none() | names
froms = st.builds(
    ast.From,
    account=accounts,
    asset=names,
    amount=amounts,
    description=optional_texts,
    chart_of_accounts=optional_names,
)
tos = st.builds(
    ast.To,
    account=accounts,
    asset=names,
    amount=amounts,
    description=optional_texts,
    chart_of_accounts=optional_names,
)
remaining_tos = st.builds(
    ast.To,
    account=accounts,
    remaining=st.just(True),
    description=optional_texts,
    chart_of_accounts=optional_names,
)
metadata_values = st.one_of(texts, names, st.integers(0, 10**18 - 1), st.booleans())
templates = st.builds(
    ast.Template,
    group_name=names,
    code=names,
    description=optional_texts,
    pending=st.none() | st.booleans(),
    hold_duration=st.none() | st.integers(1, 31_622_400),
    metadata=st.lists(st.tuples(names, metadata_values), max_size=3).map(tuple),
    send=st.builds(
        ast.Send,
        asset=names,
        amount=amounts,
        sources=st.lists(froms, max_size=3).map(tuple),
    ),
    distribute=st.builds(
        ast.Distribute,
        tos=st.lists(tos, max_size=3).map(tuple),
        remaining=st.none() | remaining_tos,
    ),
)


def test_it_formats_the_example_canonically():
    assert format_template(parse(EXAMPLE)) == EXAMPLE


def test_it_orders_elements_and_indents_two_spaces():
    assert format_template(parse(SPLIT)) == (
        "(transaction-template v1\n"
        "  (chart-of-accounts-group-name SALES)\n"
        "  (code SPLIT)\n"
        "  (pending true)\n"
        "  (send USD $price+100|2\n"
        "    (source\n"
        "      (from @buyer :amount USD $price|2\n"
        '        (description "price")\n'
        "        (chart-of-accounts BUY))\n"
        "      (from @shipping :amount USD 100|2)))\n"
        "  (distribute\n"
        "    (to $seller :amount USD $price|2\n"
        '      (description "to $seller"))\n'
        "    (to @carrier :amount USD 60+40|2)))\n"
    )


@pytest.mark.parametrize("text", SAMPLES)
def test_it_round_trips_every_sample(text):
    template = parse(text)
    formatted = format_template(template)
    assert parse(formatted) == template
    assert format_template(parse(formatted)) == formatted


def test_it_escapes_strings_and_quotes_metadata_that_would_read_back_differently():
    assert quote('say "hi"\\\n\t') == r'"say \"hi\"\\\n\t"'
    template = parse(EXAMPLE)
    metadata = (
        ("a", "true"),
        ("b", "7"),
        ("c", "007"),
        ("d", "send"),
        ("e", "two words"),
        ("f", ""),
        ("g", 7),
        ("h", False),
    )
    changed = ast.Template(
        group_name=template.group_name,
        code=template.code,
        metadata=metadata,
        send=template.send,
        distribute=template.distribute,
    )
    text = format_template(changed)
    assert (
        '(metadata (a "true") (b "7") (c 007) (d send) (e "two words") (f "") (g 7) (h false))'
        in (text)
    )
    assert parse(text) == changed


@settings(max_examples=150, deadline=None)
@given(templates)
def test_it_round_trips_random_trees(template):
    formatted = format_template(template)
    assert parse(formatted) == template
    assert format_template(parse(formatted)) == formatted


def test_it_writes_the_hold_duration_after_pending():
    text = format_template(
        parse(SPLIT.replace("(pending true)", "(hold-duration 60) (pending true)"))
    )
    assert "  (pending true)\n  (hold-duration 60)\n  (send" in text
    assert parse(text).hold_duration == 60
