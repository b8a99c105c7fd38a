"""Metadata: the flat object of strings, numbers and booleans every resource carries, and what
any stored text must be. The one place these rules live: the API's fields, the JSON parser,
the admin and the commands all call it.

Bounds (docs/SECURITY.md): keys at most 100 characters (0050), string values at most 2,000
(0051), no nesting (0067), at most 50 keys and 16 KiB of JSON per object (0047), so that one
object, and so one page of a list, stays small whatever a client sends."""

from __future__ import annotations

import json
import math
from typing import Any

from django.db.models import QuerySet, TextField
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast

from ledgerproject.errors import ErrorCode, LedgerError

MAX_KEY_LENGTH = 100
MAX_VALUE_LENGTH = 2000
MAX_KEYS = 50
MAX_BYTES = 16_384
NON_FINITE = "numbers must be finite (1e999 is not)"


def unstorable(data: Any) -> str | None:
    """Why ``data`` (parsed JSON, at any depth) cannot be stored, or None. PostgreSQL stores
    NUL characters in neither text nor jsonb, lone UTF-16 surrogates (``"\\ud800"``) are not
    UTF-8, and jsonb holds no infinite or NaN number (``1e999`` parses as infinity)."""
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return "NUL characters (\\u0000) are not allowed"
            if not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    return "lone surrogates (such as \\ud800) are not allowed"
        elif isinstance(item, float):
            if not math.isfinite(item):
                return NON_FINITE
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def validate_metadata(value: Any, *, field: str = "metadata") -> dict[str, Any]:
    if not isinstance(value, dict):
        raise LedgerError(
            ErrorCode.BAD_REQUEST, f"'{field}' must be an object.", fields={field: "not an object"}
        )
    if not value:
        return value  # nothing to check: no key, and "{}" is within every bound
    if len(value) > MAX_KEYS:
        raise LedgerError(
            ErrorCode.BAD_REQUEST,
            f"'{field}' may hold at most {MAX_KEYS} keys; it has {len(value)}.",
            fields={field: f"at most {MAX_KEYS} keys"},
        )
    for key, item in value.items():
        if len(key) > MAX_KEY_LENGTH:
            raise LedgerError(
                ErrorCode.METADATA_KEY_LENGTH,
                f"Metadata key '{key[:20]}...' exceeds {MAX_KEY_LENGTH} characters.",
                fields={f"{field}.{key[:20]}": "key too long"},
            )
        if isinstance(item, (dict, list)):
            raise LedgerError(
                ErrorCode.INVALID_METADATA_NESTING,
                f"Metadata value of '{key}' must be a string, number or boolean, not nested.",
                fields={f"{field}.{key}": "nested value"},
            )
        if item is None or not isinstance(item, (str, int, float, bool)):
            raise LedgerError(
                ErrorCode.BAD_REQUEST,
                f"Metadata value of '{key}' must be a string, number or boolean.",
                fields={f"{field}.{key}": "invalid value"},
            )
        if isinstance(item, str) and len(item) > MAX_VALUE_LENGTH:
            raise LedgerError(
                ErrorCode.METADATA_VALUE_LENGTH,
                f"Metadata value of '{key}' exceeds {MAX_VALUE_LENGTH} characters.",
                fields={f"{field}.{key}": "value too long"},
            )
    problem = unstorable(value)
    if problem is not None:
        raise LedgerError(ErrorCode.BAD_REQUEST, f"'{field}': {problem}.", fields={field: problem})
    if len(json.dumps(value)) > MAX_BYTES:
        raise LedgerError(
            ErrorCode.BAD_REQUEST,
            f"'{field}' may take at most {MAX_BYTES} bytes of JSON.",
            fields={field: f"at most {MAX_BYTES} bytes"},
        )
    return value


def filter_by_metadata(queryset: QuerySet[Any], pairs: list[tuple[str, str]]) -> QuerySet[Any]:
    """Rows whose metadata holds every ``(key, value)``, values compared as text (``42``
    matches the number 42 and the string "42"): the API's list filters and the admin's search."""
    for index, (key, value) in enumerate(pairs):
        alias = f"_metadata_{index}"
        as_text = Cast(KeyTextTransform(key, "metadata"), output_field=TextField())
        queryset = queryset.alias(**{alias: as_text}).filter(**{alias: value})
    return queryset
