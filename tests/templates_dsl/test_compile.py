"""compile_template: parse plus checks, cached by text."""

from __future__ import annotations

import copy
import pickle

import pytest

from templates_dsl.compile import compile_template
from templates_dsl.errors import TemplateError
from templates_dsl.parser import parse
from tests.templates_dsl.test_parser import EXAMPLE


def test_it_parses_checks_and_caches_by_text():
    first = compile_template(EXAMPLE)
    hits = compile_template.cache_info().hits
    assert compile_template(EXAMPLE) is first
    assert compile_template.cache_info().hits == hits + 1
    assert first == parse(EXAMPLE)


def test_it_runs_the_static_checks():
    with pytest.raises(TemplateError) as caught:
        compile_template(EXAMPLE.replace(":amount BRL $fee|2", ":amount USD $fee|2"))
    assert caught.value.message == "asset 'USD'; expected the send asset BRL"
    with pytest.raises(TemplateError):
        compile_template(EXAMPLE[:-3])


def test_the_variables_kept_on_the_tree_change_neither_equality_nor_hash():
    """A compiled template keeps its variables once computed (it is shared by every posting
    that plans with it); what it keeps is not one of its fields."""
    kept, fresh = parse(EXAMPLE), parse(EXAMPLE)
    expected = (kept.amount_variables(), kept.account_variables())
    assert tuple(kept.variables) == expected[0] + expected[1]
    assert (kept.amount_variables(), kept.account_variables()) == expected  # from what is kept
    assert kept == fresh and hash(kept) == hash(fresh)
    assert pickle.loads(pickle.dumps(kept)) == fresh  # what is kept travels, or is made again
    assert copy.deepcopy(kept) == fresh
