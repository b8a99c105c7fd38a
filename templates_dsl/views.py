"""Transaction-template endpoints. A template's text comes as the body itself whatever the
Content-Type, as JSON (a string, or ``{"dsl": "<text>"}``), or as the one part of a
``multipart/form-data`` upload (``template_text``); answers with template text are
``text/plain; charset=utf-8``."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from ledgerproject.api.pagination import KeysetPage
from ledgerproject.api.schema import COMMON_ERRORS, error_responses, page_parameters, text_or
from ledgerproject.api.views import ScopedAPIView
from templates_dsl import selectors, services
from templates_dsl.models import TransactionTemplate
from templates_dsl.serializers import TemplateOut, TemplateTextIn, template_text

TEXT = "text/plain; charset=utf-8"
TEMPLATE_TEXT = OpenApiResponse(
    {"type": "string"}, description="Template text (text/plain; charset=utf-8)."
)
# The schema names the text and its JSON form; any other Content-Type and a multipart upload
# are read too (``template_text``), and said in the operations' descriptions
# (ledgerproject/api/operations.py). A third media type
# here would break clients made by openapi-python-client 0.29 (a required body of several
# types is typed ``| Unset`` without importing ``Unset``: the module does not import).
TEXT_BODY = {
    "text/plain": {"type": "string", "minLength": 1},
    "application/json": text_or(TemplateTextIn, "The template text, as a JSON string."),
}
ERRORS = error_responses(*COMMON_ERRORS, 409)


def text_response(text: str, status: int = 200) -> HttpResponse:
    return HttpResponse(text, status=status, content_type=TEXT)


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
