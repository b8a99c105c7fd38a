"""Content negotiation that always answers JSON (template text views return their own
``text/plain`` responses), so an ``Accept: text/plain`` never turns an error into a 406."""

from __future__ import annotations

from typing import Any

from rest_framework.negotiation import BaseContentNegotiation


class AlwaysJson(BaseContentNegotiation):
    def select_parser(self, request: Any, parsers: list[Any]) -> Any:
        content_type = request.content_type or ""
        for parser in parsers:
            if content_type.split(";")[0].strip() == parser.media_type:
                return parser
        return None

    def select_renderer(self, request: Any, renderers: list[Any], format_suffix: Any = None) -> Any:
        return renderers[0], renderers[0].media_type
