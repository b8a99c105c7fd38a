"""compile_template: parse plus checks, cached by text."""

from __future__ import annotations

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
    assert caught.value.message == "asset 'USD' ; expected the send asset BRL"
    with pytest.raises(TemplateError):
        compile_template(EXAMPLE[:-3])
