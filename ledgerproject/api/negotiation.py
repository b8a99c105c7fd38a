"""Content negotiation that always answers JSON (template text views return their own
``text/plain`` responses), so an ``Accept: text/plain`` never turns an error into a 406."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rest_framework.negotiation import BaseContentNegotiation


class AlwaysJson(BaseContentNegotiation):
    def select_parser(self, request: Any, parsers: Iterable[Any]) -> Any:
        content_type = request.content_type or ""
        for parser in parsers:
            if content_type.split(";")[0].strip() == parser.media_type:
                return parser
        return None

    def select_renderer(
        self, request: Any, renderers: Iterable[Any], format_suffix: Any = None
    ) -> Any:
        first = next(iter(renderers))
        return first, first.media_type
