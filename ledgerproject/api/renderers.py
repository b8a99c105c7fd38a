"""The API's JSON renderer: DRF's, writing with ``ledgerproject.jsonbytes`` (orjson) unless a
client asks for indentation (``Accept: application/json; indent=4``). Same text: compact,
UTF-8, DRF's encoder for what JSON has no type for, U+2028 and U+2029 escaped."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.http import HttpResponse
from rest_framework import renderers
from rest_framework.utils import encoders

from ledgerproject import jsonbytes

_DEFAULT = encoders.JSONEncoder().default


class JSONRenderer(renderers.JSONRenderer):
    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        if data is None:
            return b""
        media_type, context = accepted_media_type or "", renderer_context or {}
        # DRF's ``get_indent`` reads an ``indent`` parameter of the media type, else the
        # context's: without either there is nothing to parse on each answer.
        asked = "indent" in media_type.lower() or "indent" in context
        if asked and self.get_indent(media_type, context) is not None:
            return super().render(data, accepted_media_type, renderer_context)
        out = jsonbytes.dumps(data, _DEFAULT)
        if b"\xe2\x80\xa8" in out or b"\xe2\x80\xa9" in out:
            out = out.replace(b"\xe2\x80\xa8", b"\\u2028").replace(b"\xe2\x80\xa9", b"\\u2029")
        return out


_RENDERER = JSONRenderer()


def json_response(body: Any, status: int, headers: Mapping[str, str] | None = None) -> HttpResponse:
    """An answer rendered now, as DRF's ``Response`` is rendered once the view returns (the same
    bytes and ``Content-Type``: the API always answers JSON, ``negotiation.AlwaysJson``), without
    its deferred, per-request rendering machinery. The view still finalizes it (DRF adds its
    ``Allow`` and ``Vary`` headers to any response). For the posting endpoints' answers."""
    return HttpResponse(
        _RENDERER.render(body), status=status, content_type=_RENDERER.media_type, headers=headers
    )
