"""OpenAPI generation for the declarative resource views: request and response shapes,
list parameters and the error envelope, derived from what each view declares."""

from __future__ import annotations

from typing import Any

import django_filters
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework import serializers

from ledgerproject.api.filters import MultiValueFilter
from ledgerproject.api.serializers import InputSerializer


class ErrorSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="Four digits, see the error catalogue.")
    title = serializers.CharField()
    description = serializers.CharField()
    # The envelope's field is named ``fields``; DRF takes declared fields from the class body,
    # so the name is safe though it shadows ``Serializer.fields`` for a type checker.
    fields = serializers.DictField(  # type: ignore[assignment]
        child=serializers.CharField(), required=False
    )


def error_responses(*statuses: int) -> dict[int, OpenApiResponse]:
    texts = {
        400: "Invalid request",
        401: "Missing (0041) or invalid (0042) token",
        403: "Insufficient privileges (0043)",
        404: "Entity not found (0007)",
        405: "Method not allowed (0026)",
        409: "Conflict",
        413: "Request too large",
        415: "Unsupported media type",
        422: "Refused by a business rule",
        429: "Too many requests",
    }
    return {
        s: OpenApiResponse(ErrorSerializer, description=texts.get(s, "Error")) for s in statuses
    }


COMMON_ERRORS = (400, 401, 403, 404, 405, 415, 429)

# What the list parameters' parsers enforce (pagination.py, filters.py, formats.py), stated
# as JSON Schema. Any query value with a NUL character is 0082; an empty cursor is no cursor.
NO_NUL = "^[^\\u0000]*$"
# What the services enforce on some body strings beyond their length, stated where a plain
# string would only say "no NUL" (JSON Schema has one ``pattern`` per schema, so each of these
# excludes NUL itself). By field name, on request strings with no pattern or enum of their own:
# an asset or instrument code names an instrument (instruments/services.py, CODE_PATTERN; 422
# 0034 when none has it), an account's ``type`` is anything but ``external`` (422 0074: those
# accounts come with their instrument).
INSTRUMENT_CODE = "^[A-Z0-9]+$"
REAL_PATTERNS = {
    "assetCode": INSTRUMENT_CODE,
    "baseAssetCode": INSTRUMENT_CODE,
    "counterAssetCode": INSTRUMENT_CODE,
    "baseInstrumentCode": INSTRUMENT_CODE,
    "counterInstrumentCode": INSTRUMENT_CODE,
    "type": "^(?!external$)[^\\u0000]*$",
}
LIMIT_SCHEMA = {"type": "integer", "minimum": 1, "maximum": 1000}
CURSOR_SCHEMA = {"type": "string", "pattern": "^[A-Za-z0-9_-]*$"}
METADATA_FILTER_SCHEMA = {"type": "string", "pattern": "^[^:\\u0000]+:[^\\u0000]*$"}
TEXT_FILTER_SCHEMA = {"type": "string", "pattern": NO_NUL}
# A date (YYYY-MM-DD) or an ISO 8601 timestamp, between 0001-01-02 and 9999-12-30 UTC.
DATE_OR_TIMESTAMP_SCHEMA = {
    "type": "string",
    "anyOf": [{"format": "date"}, {"format": "date-time"}],
}


PAGE_CURSOR = "Opaque cursor from the Link or X-Next-Cursor header."
NEXT_CURSOR_HEADER = "X-Next-Cursor"
LINK_HEADER = {
    "Link": {
        "schema": {"type": "string"},
        "description": 'When more items exist: `<absolute URL of the next page>; rel="next"` '
        "(RFC 8288).",
    }
}
NEXT_CURSOR = {
    NEXT_CURSOR_HEADER: {
        "schema": {"type": "string", "pattern": "^[A-Za-z0-9_-]+$"},
        "description": "When more items exist: the next page's `cursor`, the same value the "
        "`Link` URL holds. Send it back as `?cursor=` (with the same filters) for the next page.",
    },
}


def limit_parameter(description: str = "Page size, 1 to 1000 (default 100).") -> Any:
    return OpenApiParameter("limit", LIMIT_SCHEMA, description=description)


def page_parameters() -> list[Any]:
    """``limit``, ``cursor`` and ``sort_order``: how every list pages."""
    return [
        limit_parameter(),
        OpenApiParameter("cursor", CURSOR_SCHEMA, description=PAGE_CURSOR),
        OpenApiParameter("sort_order", str, enum=["asc", "desc"]),
    ]


def text_parameter(name: str, *, many: bool = False, description: str = "") -> Any:
    if many:  # drf-spectacular's many=True takes basic types only: the array, spelled out
        array = {"type": "array", "items": TEXT_FILTER_SCHEMA}
        return OpenApiParameter(name, array, explode=True, description=description)
    return OpenApiParameter(name, TEXT_FILTER_SCHEMA, description=description)


def metadata_parameter() -> Any:
    return OpenApiParameter(
        "metadata",
        {"type": "array", "items": METADATA_FILTER_SCHEMA},
        explode=True,
        description="Repeatable <key>:<value> filter.",
    )


def filter_parameter(name: str, flt: Any) -> Any:
    """A filterset's parameter with what its form field enforces."""
    if isinstance(flt, django_filters.UUIDFilter):
        return OpenApiParameter(name, {"type": "string", "format": "uuid"})
    if isinstance(flt, django_filters.ChoiceFilter):
        choices = [str(value) for value, _ in flt.extra.get("choices", [])]
        return OpenApiParameter(name, str, enum=choices)
    return text_parameter(name, many=isinstance(flt, MultiValueFilter))


def date_parameter(name: str, description: str, *, required: bool = False) -> Any:
    return OpenApiParameter(
        name, DATE_OR_TIMESTAMP_SCHEMA, description=description, required=required
    )


# Request components a JSON body may also give as a plain string (template text is
# ``"<text>"`` or ``{"dsl": "<text>"}``), by component name, with the string's description.
TEXT_OR: dict[str, str] = {}


def text_or(serializer: Any, description: str) -> Any:
    """``serializer`` as a JSON request body that may also be a string: the schema says
    ``oneOf`` the two (``declare_what_the_server_enforces``)."""
    TEXT_OR[f"{serializer.__name__}Request"] = description
    return serializer


class StrictIntegerSchema(OpenApiSerializerFieldExtension):
    """A ``StrictIntegerField``: an integer with the field's own bounds; ``int64`` only when
    they fit one (amounts have up to 38 digits, beyond what an int64 holds)."""

    target_class = "ledgerproject.api.fields.StrictIntegerField"

    def map_serializer_field(self, auto_schema: Any, direction: Any) -> dict[str, Any]:
        low, high = self.target.min_value, self.target.max_value
        schema: dict[str, Any] = {"type": "integer"}
        if low is not None and high is not None and low >= -(2**63) and high < 2**63:
            schema["format"] = "int64"
        if self.target.min_value is not None:
            schema["minimum"] = self.target.min_value
        if self.target.max_value is not None:
            schema["maximum"] = self.target.max_value
        return schema


def _strings_of(node: Any, name: str = "") -> None:
    """Every string of a request body with no pattern, enum or format of its own gets the
    pattern the server enforces: its field's (``REAL_PATTERNS``) or "no NUL" (a JSON body with
    a NUL character anywhere is refused, 0047)."""
    if isinstance(node, list):
        for item in node:
            _strings_of(item)
    elif isinstance(node, dict):
        if node.get("type") == "string" and not {"pattern", "enum", "format"} & set(node):
            node["pattern"] = REAL_PATTERNS.get(name, NO_NUL)
        for key, value in node.items():
            if key == "properties":
                for field, schema in value.items():
                    _strings_of(schema, field)
            elif key in {"items", "oneOf", "anyOf", "allOf", "additionalProperties"}:
                _strings_of(value)


def _subclasses(cls: type[InputSerializer]) -> list[type[InputSerializer]]:
    found: list[type[InputSerializer]] = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found


def declare_what_the_server_enforces(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """A postprocessing hook: what the server enforces on every request, said in the schema.

    - A request body refuses fields it does not declare (0053): a closed object.
    - An object that may be sent empty, meaning none (``InputSerializer.empty_is_none``),
      requires its required fields only when it holds any.
    - Its strings' patterns (``_strings_of``).
    - A body that may be a string (``text_or``) is ``oneOf`` the string and the object.
    - A body declared media type by media type (template text) is the whole request: an empty
      one is refused (0049, 0047), so it is required.
    - Every write that takes a body may be too large: 413, in the error envelope.
    - Every keyset-paged list (one that takes ``cursor``) answers the next page's place in
      ``Link`` (RFC 8288) when there is one; those paged by ``pagination.KeysetPage`` (their
      ``cursor`` is ``page_parameters``') answer the bare cursor in ``X-Next-Cursor`` too."""
    schemas = result.get("components", {}).get("schemas", {})
    missing = sorted(set(TEXT_OR) - set(schemas))
    assert not missing, f"text_or names no component: {missing}"
    for name, component in schemas.items():
        if name.endswith("Request") and component.get("type") == "object":
            component["additionalProperties"] = False
            _strings_of(component)
    for cls in _subclasses(InputSerializer):
        if not cls.empty_is_none:
            continue
        component = schemas.get(f"{cls.__name__}Request")
        assert component is not None, f"no component {cls.__name__}Request"
        if "required" in component:
            component["anyOf"] = [{"required": component.pop("required")}, {"maxProperties": 0}]
    for operations in result.get("paths", {}).values():
        for method, operation in operations.items():
            if not isinstance(operation, dict) or method not in {
                "get",
                "post",
                "put",
                "patch",
                "delete",
            }:
                continue
            body = operation.get("requestBody")
            if body is not None:
                content = body.get("content", {})
                if any("$ref" not in media.get("schema", {}) for media in content.values()):
                    body["required"] = True
                json_body = content.get("application/json", {})
                ref = json_body.get("schema", {}).get("$ref", "")
                described = TEXT_OR.get(ref.rsplit("/", 1)[-1])
                if described is not None:
                    text = {"type": "string", "minLength": 1, "pattern": NO_NUL}
                    text["description"] = described
                    json_body["schema"] = {"oneOf": [text, {"$ref": ref}]}
            responses = operation.get("responses", {})
            if method in {"post", "put", "patch"} and "400" in responses:
                error = {"schema": {"$ref": "#/components/schemas/Error"}}
                too_large = {"content": {"application/json": error}}
                responses.setdefault("413", {**too_large, "description": "Request too large"})
            cursor = next(
                (
                    p
                    for p in operation.get("parameters", [])
                    if p.get("name") == "cursor" and p.get("in") == "query"
                ),
                None,
            )
            if method == "get" and cursor is not None and "200" in responses:
                headers = {**LINK_HEADER, **responses["200"].get("headers", {})}
                if cursor.get("description") == PAGE_CURSOR:
                    headers = {**headers, **NEXT_CURSOR}
                responses["200"]["headers"] = headers
    return result


class LedgerAutoSchema(AutoSchema):
    def _view_kind(self) -> str | None:
        from ledgerproject.api.views import CollectionView, ItemView

        if isinstance(self.view, CollectionView):
            return "collection"
        if isinstance(self.view, ItemView):
            return "item"
        return None

    def get_request_serializer(self) -> Any:
        kind = self._view_kind()
        method = self.method.lower()
        if kind == "collection" and method == "post":
            return getattr(self.view, "create_serializer", None)
        if kind == "item" and method == "patch":
            return getattr(self.view, "update_serializer", None)
        return super().get_request_serializer()

    def get_response_serializers(self) -> Any:
        kind = self._view_kind()
        if kind is None:
            return super().get_response_serializers()
        method = self.method.lower()
        out: Any = getattr(self.view, "output_serializer", None)
        errors = error_responses(*COMMON_ERRORS, 409, 422)
        if method == "delete":
            return {204: OpenApiResponse(description="Deleted"), **errors}
        if kind == "collection" and method == "get":
            return {200: out(many=True), **errors}
        if method == "post":
            return {201: out, **errors}
        return {200: out, **errors}

    def get_override_parameters(self) -> list[Any]:
        params = list(super().get_override_parameters())
        if self._view_kind() == "collection" and self.method.lower() == "get":
            params += [
                *page_parameters(),
                OpenApiParameter("deleted", bool, description="false leaves deleted rows out."),
                metadata_parameter(),
            ]
            filterset = getattr(self.view, "filterset_class", None)
            if filterset is not None:
                for name, flt in filterset.base_filters.items():
                    params.append(filter_parameter(name, flt))
        return params
