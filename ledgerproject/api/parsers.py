"""The JSON parser of the API: DRF's, refusing what the database cannot hold and what Python
cannot parse, as 400 ``0047`` instead of a crash.

- What no column can store, in keys or strings at any depth (``ledgerproject.metadata.
  unstorable``): NUL characters, lone surrogates, infinite numbers.
- Nesting deep enough to exhaust Python's recursion (``[[[[...]]]]``): ``json`` raises
  ``RecursionError``, which DRF does not turn into a parse error.

Linear and cheap on every body: numbers are checked as they are parsed, and the walk over every
key and string (``unstorable``) runs only when the text holds an escape that could spell NUL or
a surrogate (``\\u0000``, ``\\ud800``-``\\udfff``). Nothing else can put one in a parsed string:
strict JSON refuses a raw control character, and decoded UTF-8 holds no surrogate.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from rest_framework import parsers
from rest_framework.exceptions import ParseError
from rest_framework.utils.json import strict_constant

from ledgerproject.metadata import NON_FINITE, unstorable

SUSPECT_ESCAPE = re.compile(r"\\u(?:0000|[dD][89abcdefABCDEF][0-9a-fA-F]{2})")


class _NonFinite(Exception):
    pass


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NonFinite
    return value


class JSONParser(parsers.JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        encoding = parsers.get_encoding(parser_context or {})  # type: ignore[attr-defined]
        try:
            text = stream.read().decode(encoding)
            constant = strict_constant if self.strict else None
            data = json.loads(text, parse_constant=constant, parse_float=_finite)
        except _NonFinite:
            raise ParseError(f"JSON parse error - {NON_FINITE}.") from None
        except RecursionError:
            raise ParseError("JSON parse error - the body is nested too deeply.") from None
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
        if SUSPECT_ESCAPE.search(text):
            problem = unstorable(data)
            if problem is not None:
                raise ParseError(f"JSON parse error - {problem}.")
        return data
