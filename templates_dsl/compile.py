"""Template text to a checked AST, cached so that posting never parses the same text twice."""

from __future__ import annotations

import functools

from templates_dsl import limits
from templates_dsl.ast import Span, Template
from templates_dsl.checks import check_template
from templates_dsl.errors import TemplateError
from templates_dsl.parser import parse


@functools.lru_cache(maxsize=2048)
def compile_template(text: str) -> Template:
    """``parse`` then ``check_template``; the AST is immutable, so callers may share it.
    Text over ``limits.MAX_TEMPLATE_BYTES`` is refused before it is read."""
    if len(text) > limits.MAX_TEMPLATE_BYTES or len(text.encode()) > limits.MAX_TEMPLATE_BYTES:
        raise TemplateError.at(
            Span(1, 1),
            f"the template text is longer than {limits.MAX_TEMPLATE_BYTES} bytes; "
            "expected a shorter template",
        )
    template = parse(text)
    check_template(template)
    return template
