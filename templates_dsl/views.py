"""Transaction-template endpoints. A template's text comes as the body itself whatever the
Content-Type, as JSON (a string, or ``{"dsl": "<text>"}``), or as the one part of a
``multipart/form-data`` upload (``template_text``); answers with template text are
``text/plain; charset=utf-8``."""

from __future__ import annotations

import io
from typing import Any

from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.http import HttpResponse
from django.http.multipartparser import MultiPartParserError
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from ledgerproject.api.pagination import KeysetPage
from ledgerproject.api.schema import COMMON_ERRORS, TextOr, error_responses, page_parameters
from ledgerproject.api.serializers import validated
from ledgerproject.api.views import ScopedAPIView
from ledgerproject.errors import ErrorCode, LedgerError
from templates_dsl import limits, selectors, services
from templates_dsl.models import TransactionTemplate
from templates_dsl.serializers import TemplateOut, TemplateTextIn

TEXT = "text/plain; charset=utf-8"
TEMPLATE_TEXT = OpenApiResponse(
    {"type": "string"}, description="Template text (text/plain; charset=utf-8)."
)
# The schema names the text and its JSON form; any other Content-Type and a multipart upload
# are read too (``template_text``), and said in the operations' descriptions. A third media type
# here would break clients made by openapi-python-client 0.29 (a required body of several
# types is typed ``| Unset`` without importing ``Unset``: the module does not import).
TEXT_BODY = {
    "text/plain": {"type": "string", "minLength": 1},
    "application/json": TextOr(TemplateTextIn, "The template text, as a JSON string."),
}
BODY_FORMS = (
    "The body is the template text whatever its Content-Type (text/plain, "
    "application/octet-stream, none); or, with Content-Type application/json, the text as a "
    'JSON string or `{"dsl": "<text>"}`; or a multipart/form-data upload whose one part '
    "(named `dsl`, or the only file part) is the text."
)
ERRORS = error_responses(*COMMON_ERRORS, 409)


def text_response(text: str, status: int = 200) -> HttpResponse:
    return HttpResponse(text, status=status, content_type=TEXT)


def media_type(request: Request) -> str:
    return (request.content_type or "").split(";", 1)[0].strip().lower()


def checked_text(raw: bytes) -> str:
    """Template text from its UTF-8 bytes: bounded (413), decoded, not empty (0049)."""
    if len(raw) > limits.MAX_TEMPLATE_BYTES:
        raise RequestDataTooBig("The template text is larger than MAX_TEMPLATE_BYTES.")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise LedgerError(ErrorCode.BAD_REQUEST, "The template text must be UTF-8.") from None
    if not text.strip():
        raise LedgerError(ErrorCode.EMPTY_DSL, "The template text is empty.")
    return text


def uploaded_text(request: Request) -> str:
    """The template of a ``multipart/form-data`` body (``curl -F dsl=@payment.tmpl``): the
    part named ``dsl``, a file or a field, else the one file part whatever its name. Any other
    part is refused (0053), as an unknown field of a JSON body is."""
    django_request = request._request
    # Read whole first (bounded: 413), then parsed from memory; by hand, because Django
    # parses a multipart body by itself for a POST only, and a PUT takes one too.
    body = io.BytesIO(django_request.body)
    try:
        fields, files = django_request.parse_file_upload(django_request.META, body)
    except (MultiPartParserError, SuspiciousOperation) as exc:
        raise LedgerError(ErrorCode.BAD_REQUEST, f"Malformed multipart body: {exc}") from None
    uploads = [(name, f.read()) for name, found in files.lists() for f in found]
    values = [(name, value.encode()) for name, found in fields.lists() for value in found]
    parts = uploads + values
    chosen = [part for part in parts if part[0] == "dsl"] or uploads
    if not chosen:
        raise LedgerError(
            ErrorCode.MISSING_FIELDS,
            "The multipart body has no template: send it as a file part named dsl.",
            fields={"dsl": "required"},
        )
    if len(chosen) > 1:
        raise LedgerError(
            ErrorCode.BAD_REQUEST,
            "The multipart body has several template parts: send one, named dsl.",
            fields={"dsl": "several parts"},
        )
    others = sorted({part[0] for part in parts if part is not chosen[0]})
    if others:
        raise LedgerError(
            ErrorCode.UNEXPECTED_FIELDS,
            f"Unexpected parts in the multipart body: {', '.join(others)}; send only the "
            "template, as a file part named dsl.",
            fields={name: "unexpected part" for name in others},
        )
    return checked_text(chosen[0][1])


def template_text(request: Request) -> str:
    """The template text of a request, in any of its forms. With a JSON Content-Type, a body
    that is a JSON object or string is the JSON form; any other is read as text, as before
    there was a JSON form (template text never starts with ``{`` or ``"``)."""
    raw = request._request.body
    media = media_type(request)
    if media == "multipart/form-data":
        return uploaded_text(request)
    if media == "application/json" and raw.lstrip()[:1] in (b"{", b'"'):
        data = request.data
        text = data if isinstance(data, str) else validated(TemplateTextIn, data)["dsl"]
        return checked_text(text.encode())
    return checked_text(raw)


class TemplateView(ScopedAPIView):
    def body_text(self, request: Request) -> str:
        return template_text(request)


class TemplateCollection(TemplateView):
    @extend_schema(
        operation_id="transaction_templates_list",
        parameters=page_parameters(),
        # text/plain first: what a request with no Accept header gets, and the form a client
        # generated from the schema reads by default (docs/CLIENTS.md).
        responses={
            (200, "text/plain"): OpenApiResponse(
                OpenApiTypes.STR,  # one text (a schema dict would be taken for a list's item)
                description=(
                    "The template texts as `(text, text)` (text/plain; charset=utf-8); with "
                    "`Accept: application/json`, a JSON array of templates instead."
                ),
            ),
            (200, "application/json"): TemplateOut(many=True),
            **ERRORS,
        },
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Any:
        """Keyset-paged like every list (``limit``, ``cursor``, ``Link``), in either form."""
        page = KeysetPage(request)
        templates = page.slice(selectors.templates_active(self.ledger))
        if "application/json" in request.headers.get("Accept", ""):
            return page.response(TemplateOut(templates, many=True).data)
        response = text_response("(" + ", ".join(t.text for t in templates) + ")")
        return page.with_link(response)

    @extend_schema(
        operation_id="transaction_templates_create",
        description=f"Store a template. {BODY_FORMS}",
        request=TEXT_BODY,
        responses={(201, "text/plain"): TEMPLATE_TEXT, **ERRORS},
    )
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Any:
        template = services.template_create(ledger=self.ledger, text=self.body_text(request))
        return text_response(template.text, status=201)


class TemplateByType(TemplateView):
    """``GET .../transaction-types/{code}`` (the specification's retrieval path)."""

    @extend_schema(responses={(200, "text/plain"): TEMPLATE_TEXT, **ERRORS})
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Any:
        return text_response(selectors.template_get(self.ledger, kwargs["code"]).text)


class TemplateItem(TemplateByType):
    @extend_schema(
        description=f"Replace a template's text (its code stays). {BODY_FORMS}",
        request=TEXT_BODY,
        responses={(200, "text/plain"): TEMPLATE_TEXT, **ERRORS},
    )
    def put(self, request: Request, *args: Any, **kwargs: Any) -> Any:
        text = self.body_text(request)
        template = selectors.template_get(self.ledger, kwargs["code"], removed_is_error=True)
        return text_response(services.template_replace(template=template, text=text).text)

    @extend_schema(responses={204: None, **ERRORS})
    def delete(self, request: Request, *args: Any, **kwargs: Any) -> Any:
        template = selectors.template_get(self.ledger, kwargs["code"], removed_is_error=True)
        services.template_delete(template=template)
        return Response(status=204)


__all__ = ["TemplateByType", "TemplateCollection", "TemplateItem", "TransactionTemplate"]
