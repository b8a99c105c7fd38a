"""The JSON parser of the API: DRF's, refusing what the database cannot hold and what Python
cannot parse, as 400 ``0047`` instead of a crash.

- What no column can store, in keys or strings at any depth (``ledgerproject.metadata.
  unstorable``): NUL characters, lone surrogates, infinite numbers.
- Nesting deep enough to exhaust Python's recursion (``[[[[...]]]]``): ``json`` raises
  ``RecursionError``, which DRF does not turn into a parse error.
"""

from __future__ import annotations

from typing import Any

from rest_framework import parsers
from rest_framework.exceptions import ParseError

from ledgerproject.metadata import unstorable


class JSONParser(parsers.JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - the body is nested too deeply.") from None
        problem = unstorable(data)
        if problem is not None:
            raise ParseError(f"JSON parse error - {problem}.")
        return data
