"""Keyset pagination on (createdAt, id): ``limit``, an opaque ``cursor`` and an RFC 8288
``Link: <url>; rel="next"`` header (with the cursor alone in ``X-Next-Cursor``). No OFFSET, so
page cost does not grow with the table."""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import json
import uuid
from collections.abc import Iterable
from typing import Any

from django.db.models import Model, Q, QuerySet
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param

from ledgerproject.errors import ErrorCode, LedgerError, invalid_parameter
from ledgerproject.formats import digits_to_int

DEFAULT_LIMIT = 100
MAX_LIMIT = 1000
PAGE_PARAMS = frozenset({"limit", "cursor", "sort_order"})
PAGE_MAX_BYTES = 4 * 1024 * 1024
"""A page stops before its items would pass this estimate of rendered JSON (always at least
one item); its ``Link`` then continues after the last item shown, so nothing is skipped."""

_BULKY_FIELDS = ("metadata", "address", "legs", "text")


def approx_size(row: Any) -> int:
    """A cheap estimate of a row's rendered size: a fixed part plus its free-form fields."""
    size = 512
    for name in _BULKY_FIELDS:
        value = getattr(row, name, None)
        if value:
            size += len(value) if isinstance(value, str) else len(str(value))
    return size


def refuse_unknown_parameters(request: Request, known: Iterable[str]) -> None:
    """A list answers 400 0082 to a query parameter it does not know (``page`` above all: a
    client paging by number would otherwise get page one forever). ``metadata.<key>`` is known
    wherever ``metadata`` is."""
    allowed = PAGE_PARAMS | set(known)
    for name in request.query_params:
        if name in allowed or (name.startswith("metadata.") and "metadata" in allowed):
            continue
        shown = name.replace("\x00", "")[:100]
        raise invalid_parameter(
            shown,
            f"Unknown query parameter '{shown}'. Lists are paged with `cursor` (the opaque value "
            'of the Link rel="next" header) and `limit`; the known parameters here are '
            + ", ".join(sorted(allowed))
            + ".",
        )


def encode_cursor(first: Any, pk: uuid.UUID) -> str:
    value = first.isoformat() if isinstance(first, dt.datetime) else first
    raw = json.dumps([value, str(pk)]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, *, timestamped: bool = True) -> tuple[Any, uuid.UUID]:
    """The cursor's (first key, id). ``timestamped``: the first key is a time (``created_at``,
    ``effective_at``),
    else an integer (a statement's ``balance_version``); a cursor of the other kind, tampered
    with or out of range, is 400 0082."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        first, pk = json.loads(base64.urlsafe_b64decode(padded.encode()))
        if timestamped:
            if not isinstance(first, str):
                raise ValueError(first)
            first = dt.datetime.fromisoformat(first)
            if first.tzinfo is None:
                raise ValueError(first)
            first.astimezone(dt.UTC)
        elif not isinstance(first, int) or isinstance(first, bool) or abs(first) >= 2**63:
            raise ValueError(first)
        return first, uuid.UUID(str(pk))
    except (ValueError, TypeError, OverflowError, json.JSONDecodeError, binascii.Error):
        raise invalid_parameter("cursor", "The cursor is not valid.") from None


class KeysetPage:
    def __init__(
        self,
        request: Request,
        *,
        keys: tuple[str, str] = ("created_at", "id"),
        known: Iterable[str] = (),
    ) -> None:
        """``known``: the list's query parameters besides the paging ones; any other is 0082."""
        refuse_unknown_parameters(request, known)
        self.request = request
        self.keys = keys
        params = request.query_params
        raw_limit = params.get("limit")
        if raw_limit is None or raw_limit == "":
            self.limit = DEFAULT_LIMIT
        else:
            limit = digits_to_int(raw_limit)
            if limit is None or limit < 1:
                raise invalid_parameter("limit", "limit must be a positive integer.")
            self.limit = limit
            if self.limit > MAX_LIMIT:
                raise LedgerError(
                    ErrorCode.PAGINATION_LIMIT_EXCEEDED,
                    f"limit may be at most {MAX_LIMIT}.",
                    fields={"limit": f"at most {MAX_LIMIT}"},
                )
        order = (params.get("sort_order") or "asc").lower()
        if order not in {"asc", "desc"}:
            raise invalid_parameter("sort_order", "sort_order must be asc or desc.")
        self.descending = order == "desc"
        cursor = params.get("cursor")
        timestamped = keys[0] in ("created_at", "effective_at")
        self.cursor = decode_cursor(cursor, timestamped=timestamped) if cursor else None
        self.next_cursor: str | None = None

    def slice(self, queryset: QuerySet[Any]) -> list[Any]:
        first, second = self.keys
        if self.cursor is not None:
            value, pk = self.cursor
            op, bound = ("lt", "lte") if self.descending else ("gt", "gte")
            # (first, second) past the cursor, with the bound on ``first`` spelled out so that
            # the (ledger, created_at, id) index is entered at the cursor, not scanned to it.
            after = Q(**{f"{first}__{bound}": value}) & (
                Q(**{f"{first}__{op}": value}) | Q(**{f"{second}__{op}": pk})
            )
            queryset = queryset.filter(after)
        ordering = [f"-{k}" for k in self.keys] if self.descending else list(self.keys)
        rows: list[Model] = list(queryset.order_by(*ordering)[: self.limit + 1])
        kept, budget = 0, PAGE_MAX_BYTES
        for kept, row in enumerate(rows[: self.limit], start=1):
            budget -= approx_size(row)
            if budget < 0 and kept > 1:
                kept -= 1
                break
        if kept < len(rows):
            rows = rows[:kept]
            last = rows[-1]
            self.next_cursor = encode_cursor(getattr(last, first), last.pk)
        return rows

    def response(self, data: Any) -> Response:
        return self.with_link(Response(data))

    def with_link(self, response: Any) -> Any:
        """Add the ``Link: <...>; rel="next"`` header when more items exist, and the cursor
        alone as ``X-Next-Cursor``: a generated client reads a header, but parses no Link."""
        if self.next_cursor:
            url = replace_query_param(self.request.build_absolute_uri(), "cursor", self.next_cursor)
            response["Link"] = f'<{url}>; rel="next"'
            response["X-Next-Cursor"] = self.next_cursor
        return response
