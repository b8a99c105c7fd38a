"""One exception handler: every failure under /v1 becomes ``{code, title, description}``."""

from __future__ import annotations

import logging
import math
from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpRequest, JsonResponse
from rest_framework import exceptions
from rest_framework.response import Response

from ledgerproject.errors import ErrorCode, LedgerError

logger = logging.getLogger("ledgerproject.api")


def _flatten(detail: Any, prefix: str = "") -> dict[str, str]:
    if isinstance(detail, dict):
        out: dict[str, str] = {}
        for key, value in detail.items():
            name = "request" if key == "non_field_errors" else str(key)
            out.update(_flatten(value, f"{prefix}{name}" if not prefix else f"{prefix}.{name}"))
        return out
    if isinstance(detail, list):
        if detail and all(not isinstance(d, (dict, list)) for d in detail):
            return {prefix or "request": " ".join(str(d) for d in detail)}
        out = {}
        for index, value in enumerate(detail):
            out.update(_flatten(value, f"{prefix}[{index}]"))
        return out
    return {prefix or "request": str(detail)}


def _codes(detail: Any) -> set[str]:
    if isinstance(detail, dict):
        return set().union(*(_codes(v) for v in detail.values())) if detail else set()
    if isinstance(detail, list):
        return set().union(*(_codes(v) for v in detail)) if detail else set()
    return {getattr(detail, "code", "invalid")}


def api_error_for(exc: Exception) -> LedgerError:
    """Map any exception to the application error it stands for."""
    if isinstance(exc, LedgerError):
        return exc
    if isinstance(exc, exceptions.ValidationError):
        fields = _flatten(exc.detail)
        if "required" in _codes(exc.detail):
            missing = sorted(k for k, v in fields.items() if "required" in v)
            return LedgerError(
                ErrorCode.MISSING_FIELDS,
                f"Missing required fields: {', '.join(missing) or 'see fields'}.",
                fields=fields,
            )
        summary = "; ".join(f"{k}: {v}" for k, v in fields.items())
        return LedgerError(ErrorCode.BAD_REQUEST, f"Invalid request: {summary}", fields=fields)
    if isinstance(exc, exceptions.ParseError):
        return LedgerError(ErrorCode.BAD_REQUEST, f"Malformed request body: {exc.detail}")
    if isinstance(exc, exceptions.UnsupportedMediaType):
        return LedgerError(ErrorCode.UNSUPPORTED_MEDIA_TYPE, str(exc.detail))
    if isinstance(exc, exceptions.NotAuthenticated):
        return LedgerError(
            ErrorCode.TOKEN_MISSING, "Send the header 'Authorization: Bearer <token>'."
        )
    if isinstance(exc, exceptions.AuthenticationFailed):
        return LedgerError(ErrorCode.INVALID_TOKEN, str(exc.detail))
    if isinstance(exc, (exceptions.PermissionDenied, DjangoPermissionDenied)):
        detail = getattr(exc, "detail", None) or "This token may not perform this action."
        return LedgerError(ErrorCode.INSUFFICIENT_PRIVILEGES, str(detail))
    if isinstance(exc, (exceptions.NotFound, Http404)):
        return LedgerError(ErrorCode.NOT_FOUND, "The requested resource was not found.")
    if isinstance(exc, exceptions.MethodNotAllowed):
        return LedgerError(ErrorCode.METHOD_NOT_ALLOWED, str(exc.detail))
    if isinstance(exc, exceptions.Throttled):
        return LedgerError(ErrorCode.THROTTLED, str(exc.detail))
    if isinstance(exc, RequestDataTooBig):
        return LedgerError(ErrorCode.REQUEST_TOO_LARGE, "The request body is too large.")
    if isinstance(exc, exceptions.APIException):
        error = LedgerError(ErrorCode.BAD_REQUEST, str(exc.detail))
        error.status_override = exc.status_code  # type: ignore[attr-defined]
        return error
    logger.exception("Unhandled error", exc_info=exc)
    return LedgerError(ErrorCode.INTERNAL_SERVER_ERROR, "An unexpected error occurred.")


def error_status(error: LedgerError) -> int:
    return int(getattr(error, "status_override", error.http_status))


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    error = api_error_for(exc)
    headers: dict[str, str] = {}
    wait = getattr(exc, "wait", None) if isinstance(exc, exceptions.Throttled) else None
    if wait is not None:
        headers["Retry-After"] = str(max(1, math.ceil(wait)))
    if isinstance(exc, exceptions.NotAuthenticated | exceptions.AuthenticationFailed):
        headers["WWW-Authenticate"] = 'Bearer realm="api"'
    return Response(error.as_body(), status=error_status(error), headers=headers)


def json_error_response(error: LedgerError) -> JsonResponse:
    return JsonResponse(error.as_body(), status=error_status(error))


def server_error(request: HttpRequest) -> Any:
    """``handler500``: the envelope under /v1, Django's plain page elsewhere."""
    if request.path.startswith("/v1"):
        return json_error_response(
            LedgerError(ErrorCode.INTERNAL_SERVER_ERROR, "An unexpected error occurred.")
        )
    from django.views.defaults import server_error as default_server_error

    return default_server_error(request)


def not_found(request: HttpRequest, exception: Exception) -> Any:
    if request.path.startswith("/v1"):
        return json_error_response(LedgerError(ErrorCode.NOT_FOUND, "No such endpoint."))
    from django.views.defaults import page_not_found

    return page_not_found(request, exception)
