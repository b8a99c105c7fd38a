"""Template text to a checked AST, cached so that posting never parses the same text twice."""

from __future__ import annotations

import functools

from templates_dsl.ast import Template
from templates_dsl.checks import check_template
from templates_dsl.parser import parse


@functools.lru_cache(maxsize=2048)
def compile_template(text: str) -> Template:
    """``parse`` then ``check_template``; the AST is immutable, so callers may share it."""
    template = parse(text)
    check_template(template)
    return template
