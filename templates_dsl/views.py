"""Transaction-template endpoints. Bodies are template text whatever the Content-Type; answers
with template text are ``text/plain; charset=utf-8``."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.http import HttpResponse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from ledgerproject.api.pagination import KeysetPage
from ledgerproject.api.schema import COMMON_ERRORS, error_responses
from ledgerproject.api.views import ScopedAPIView
from ledgerproject.errors import ErrorCode, LedgerError
from templates_dsl import limits, selectors, services
from templates_dsl.models import TransactionTemplate
from templates_dsl.serializers import TemplateOut

TEXT = "text/plain; charset=utf-8"
TEMPLATE_TEXT = OpenApiResponse(
    {"type": "string"}, description="Template text (text/plain; charset=utf-8)."
)
TEXT_BODY = {
    "text/plain": {"type": "string"},
    "application/octet-stream": {"type": "string", "format": "binary"},
}
ERRORS = error_responses(*COMMON_ERRORS, 409)


def text_response(text: str, status: int = 200) -> HttpResponse:
    return HttpResponse(text, status=status, content_type=TEXT)


class TemplateView(ScopedAPIView):
    parser_classes: list[Any] = []

    def body_text(self, request: Request) -> str:
        body = request._request.body
        if len(body) > limits.MAX_TEMPLATE_BYTES:
            raise RequestDataTooBig("The template text is larger than MAX_TEMPLATE_BYTES.")
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            raise LedgerError(ErrorCode.BAD_REQUEST, "The template text must be UTF-8.") from None
        if not text.strip():
            raise LedgerError(ErrorCode.EMPTY_DSL, "The template text is empty.")
        return text


class TemplateCollection(TemplateView):
    @extend_schema(
        operation_id="transaction_templates_list",
        responses={
            (200, "application/json"): OpenApiResponse(
                TemplateOut(many=True),
                description=(
                    "Template texts as `(text, text)`; "
                    "with `Accept: application/json`, a JSON array."
                ),
            ),
            (200, "text/plain"): TEMPLATE_TEXT,
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
    @extend_schema(request=TEXT_BODY, responses={(200, "text/plain"): TEMPLATE_TEXT, **ERRORS})
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
