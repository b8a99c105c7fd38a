"""Serializer fields for the API's shared shapes: timestamps, status, metadata, amounts."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from ledgerproject.errors import ErrorCode, LedgerError
from ledgerproject.formats import (
    render_timestamp,
)
from ledgerproject.metadata import MAX_KEYS, MAX_VALUE_LENGTH, validate_metadata


class _WholeMatch(RegexValidator):
    """A regular expression the whole value must match, as JSON Schema's ``pattern`` anchored
    with ``^...$`` means it: Python's ``$`` also matches before a final newline."""

    def __call__(self, value: Any) -> None:
        if not isinstance(value, str) or re.fullmatch(self.regex, value) is None:
            raise ValidationError(self.message, code=self.code)


def pattern_field(pattern: str, **kwargs: Any) -> serializers.CharField:
    """A string that must match ``pattern`` (``^...$``) exactly as sent, not trimmed first: what
    the schema declares is what the server accepts, byte for byte."""
    validator = _WholeMatch(re.compile(pattern), message=f"Must match {pattern}.")
    return serializers.CharField(trim_whitespace=False, validators=[validator], **kwargs)


STATUS_DEFAULT = {"status_code": "ACTIVE", "status_description": None}


@extend_schema_field({"type": "string", "example": "2026-11-22T12:00:00+0000", "nullable": True})
class TimestampField(serializers.Field):
    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("read_only", True)
        super().__init__(**kwargs)

    def to_representation(self, value: dt.datetime) -> str | None:
        return render_timestamp(value)


class StatusSchema(serializers.Serializer):
    code = serializers.CharField(max_length=100)
    description = serializers.CharField(max_length=256, allow_null=True, required=False)


@extend_schema_field(StatusSchema)
class StatusField(serializers.Field):
    """``{code, description}`` stored as ``status_code`` and ``status_description``."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("source", "*")
        super().__init__(**kwargs)

    def to_representation(self, obj: Any) -> dict[str, Any]:
        return {"code": obj.status_code, "description": obj.status_description}

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        if not isinstance(data, dict):
            raise serializers.ValidationError("status must be an object {code, description}.")
        unknown = sorted(set(data) - {"code", "description"})
        if unknown:
            raise LedgerError(
                ErrorCode.UNEXPECTED_FIELDS,
                f"Unexpected fields in status: {', '.join(unknown)}.",
                fields={f"status.{k}": "unexpected field" for k in unknown},
            )
        code = data.get("code")
        if not isinstance(code, str) or not code.strip() or len(code) > 100:
            raise serializers.ValidationError(
                "status.code must be a string of 1 to 100 characters."
            )
        description = data.get("description")
        if description is not None and (
            not isinstance(description, str) or not 1 <= len(description) <= 256
        ):
            raise serializers.ValidationError(
                "status.description must be a string of 1 to 256 characters, or null."
            )
        return {"status_code": code, "status_description": description}


@extend_schema_field(
    {
        "type": "object",
        "maxProperties": MAX_KEYS,
        "additionalProperties": {
            "oneOf": [
                {"type": "string", "maxLength": MAX_VALUE_LENGTH, "pattern": "^[^\\u0000]*$"},
                {"type": "number"},
                {"type": "boolean"},
            ]
        },
    }
)
class MetadataField(serializers.Field):
    def to_representation(self, value: Any) -> Any:
        return value or {}

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        return validate_metadata(data, field=self.field_name or "metadata")


class StrictIntegerField(serializers.Field):
    """A JSON integer (never a float, a bool or a string of digits); its schema, with its
    bounds, comes from ``schema.StrictIntegerSchema``."""

    def __init__(self, *, min_value: int | None = None, max_value: int | None = None, **kw: Any):
        self.min_value = min_value
        self.max_value = max_value
        super().__init__(**kw)

    def to_representation(self, value: int) -> int:
        return int(value)

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not isinstance(data, int):
            raise serializers.ValidationError("Must be an integer.")
        if self.min_value is not None and data < self.min_value:
            raise serializers.ValidationError(f"Must be at least {self.min_value}.")
        if self.max_value is not None and data > self.max_value:
            raise serializers.ValidationError(f"Must be at most {self.max_value}.")
        return data


def declared(field_class: type[serializers.Field], schema: dict[str, Any]) -> Any:
    """``field_class`` with ``schema`` as its OpenAPI schema: the rule a service checks after
    the serializer (with its own error code), stated where the schema can say it."""
    body: dict[str, Any] = {}
    if issubclass(field_class, serializers.CharField) and {"pattern", "enum"} & set(schema):

        def __init__(self: Any, **kwargs: Any) -> None:
            # What the schema declares is what the service checks: the value as sent, untrimmed.
            kwargs.setdefault("trim_whitespace", False)
            field_class.__init__(self, **kwargs)

        body["__init__"] = __init__
    named = type(f"Declared{field_class.__name__}", (field_class,), body)
    return extend_schema_field(schema)(named)
