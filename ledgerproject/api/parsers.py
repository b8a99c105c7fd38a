"""The JSON parser of the API: DRF's, refusing what the database cannot hold and what Python
cannot parse, as 400 ``0047`` instead of a crash.

- NUL characters (``\\u0000``), in keys or strings at any depth: PostgreSQL stores them in
  neither ``text`` nor ``jsonb``, and no field of the API needs one.
- Nesting deep enough to exhaust Python's recursion (``[[[[...]]]]``): ``json`` raises
  ``RecursionError``, which DRF does not turn into a parse error.
"""

from __future__ import annotations

from typing import Any

from rest_framework import parsers
from rest_framework.exceptions import ParseError


def holds_nul(data: Any) -> bool:
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


class JSONParser(parsers.JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - the body is nested too deeply.") from None
        if holds_nul(data):
            raise ParseError("JSON parse error - NUL characters (\\u0000) are not allowed.")
        return data
