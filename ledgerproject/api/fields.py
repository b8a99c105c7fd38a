"""Serializer fields for the contract's shared shapes: timestamps, status, metadata, amounts."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from ledgerproject.api.errors import ApiError, ErrorCode
from ledgerproject.metadata import validate_metadata

TIMESTAMP_FORMAT = "%Y-%m-%dT%H:%M:%S%z"
STATUS_DEFAULT = {"status_code": "ACTIVE", "status_description": None}


# A day inside Python's datetime range at each end, so that converting to UTC and adding or
# subtracting a day (charts do) can never overflow.
EARLIEST = dt.datetime(1, 1, 2, tzinfo=dt.UTC)
LATEST = dt.datetime(9999, 12, 30, 23, 59, 59, 999999, tzinfo=dt.UTC)


def digits_to_int(raw: str | None, *, max_digits: int = 9) -> int | None:
    """A non-negative integer written in at most ``max_digits`` ASCII digits, else None.
    (``str.isdigit`` alone accepts '²' and numbers too long for ``int``: both would crash.)"""
    if not raw or len(raw) > max_digits or not (raw.isascii() and raw.isdigit()):
        return None
    return int(raw)


def render_timestamp(value: dt.datetime | None) -> str | None:
    if value is None:
        return None
    return value.astimezone(dt.UTC).strftime(TIMESTAMP_FORMAT)


def parse_timestamp(raw: str, *, field: str, end_of_day: bool = False) -> dt.datetime:
    """A date (``YYYY-MM-DD``) or a full ISO 8601 timestamp; anything else is 400 0077."""
    text = raw.strip()
    value: dt.datetime | None = None
    try:
        if len(text) == 10:
            day = parse_date(text)
            if day is not None:
                value = dt.datetime.combine(day, dt.time.max if end_of_day else dt.time.min)
        else:
            value = parse_datetime(text.replace(" ", "+", 1) if text.count(" ") == 1 else text)
    except ValueError:
        value = None
    if value is None:
        raise ApiError(
            ErrorCode.INVALID_DATE_FORMAT,
            f"'{field}' must be YYYY-MM-DD or an ISO 8601 timestamp.",
            fields={field: "invalid date"},
        )
    if timezone.is_naive(value):
        value = value.replace(tzinfo=dt.UTC)
    try:
        in_range = EARLIEST <= value.astimezone(dt.UTC) <= LATEST
    except OverflowError:
        in_range = False
    if not in_range:
        raise ApiError(
            ErrorCode.INVALID_DATE_FORMAT,
            f"'{field}' must lie between 0001-01-02 and 9999-12-30 (UTC).",
            fields={field: "out of range"},
        )
    return value


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
            raise ApiError(
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
        if description is not None and (not isinstance(description, str) or len(description) > 256):
            raise serializers.ValidationError("status.description must be a string or null.")
        return {"status_code": code, "status_description": description}


@extend_schema_field(
    {
        "type": "object",
        "additionalProperties": {
            "oneOf": [{"type": "string"}, {"type": "number"}, {"type": "boolean"}]
        },
    }
)
class MetadataField(serializers.Field):
    def to_representation(self, value: Any) -> Any:
        return value or {}

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        return validate_metadata(data, field=self.field_name or "metadata")


@extend_schema_field(OpenApiTypes.INT64)
class StrictIntegerField(serializers.Field):
    """A JSON integer (never a float, a bool or a string of digits)."""

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
