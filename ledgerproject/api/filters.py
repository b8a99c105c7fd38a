"""List filters shared by every resource: repeatable values, metadata, soft-deleted rows."""

from __future__ import annotations

from typing import Any

import django_filters
from django import forms
from django.db.models import QuerySet
from rest_framework.request import Request

from ledgerproject.errors import ErrorCode, LedgerError, invalid_parameter
from ledgerproject.formats import parse_timestamp
from ledgerproject.metadata import filter_by_metadata


class MultiValueField(forms.Field):
    widget = forms.MultipleHiddenInput

    def to_python(self, value: Any) -> list[str]:
        if not value:
            return []
        return [str(v) for v in value]


class MultiValueFilter(django_filters.Filter):
    """``status=ACTIVE&status=002``: any of the repeated values."""

    field_class = MultiValueField

    def filter(self, qs: QuerySet[Any], value: list[str]) -> QuerySet[Any]:
        if not value:
            return qs
        return qs.filter(**{f"{self.field_name}__in": value})


def _bool_param(request: Request, name: str) -> bool | None:
    raw = request.query_params.get(name)
    if raw is None:
        return None
    lowered = raw.lower()
    if lowered in {"true", "1"}:
        return True
    if lowered in {"false", "0"}:
        return False
    raise LedgerError(
        ErrorCode.INVALID_QUERY_PARAMETER,
        f"{name} must be true or false.",
        fields={name: "must be true or false"},
    )


def metadata_pairs(request: Request) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    for name, values in request.query_params.lists():
        if name.startswith("metadata."):
            key = name[len("metadata.") :]
            pairs.extend((key, v) for v in values)
        elif name == "metadata":
            for item in values:
                key, sep, value = item.partition(":")
                if not sep or not key:
                    raise LedgerError(
                        ErrorCode.INVALID_QUERY_PARAMETER,
                        "metadata filters are metadata=<key>:<value> or metadata.<key>=<value>.",
                        fields={"metadata": "expected <key>:<value>"},
                    )
                pairs.append((key, value))
    return pairs


def apply_common_filters(queryset: QuerySet[Any], request: Request) -> QuerySet[Any]:
    """``metadata.<key>=<value>`` (all must match, compared as text) and ``deleted=false``."""
    queryset = filter_by_metadata(queryset, metadata_pairs(request))
    deleted = _bool_param(request, "deleted")
    if deleted is not None and not any(
        f.name == "deleted_at" for f in queryset.model._meta.concrete_fields
    ):
        raise LedgerError(
            ErrorCode.INVALID_QUERY_PARAMETER,
            f"deleted does not apply here: {queryset.model._meta.verbose_name_plural} are never "
            "deleted.",
            fields={"deleted": "not a filter of this list"},
        )
    if deleted is False:
        queryset = queryset.filter(deleted_at__isnull=True)
    elif deleted is True:
        queryset = queryset.filter(deleted_at__isnull=False)
    return queryset


def refuse_nul_characters(request: Request) -> None:
    """PostgreSQL can compare no text with a NUL character in it: 0082, not a crash."""
    for name, values in request.query_params.lists():
        if "\x00" in name or any("\x00" in value for value in values):
            raise LedgerError(
                ErrorCode.INVALID_QUERY_PARAMETER,
                "Query parameters cannot contain NUL characters.",
                fields={name.replace("\x00", ""): "contains a NUL character"},
            )


# The query parameters that hold a date or timestamp, and those that hold an id, wherever they
# appear (tests/api/test_empty_query_values.py holds these against the schema's parameters).
DATE_PARAMETERS = frozenset(
    {"at", "asOf", "beginDate", "endDate", "effectiveFrom", "effectiveTo", "from", "to"}
)
ID_PARAMETERS = frozenset(
    {"accountId", "ledgerId", "parentAccountId", "parentTransactionId", "portfolioId", "productId"}
)
# Switches (``?dryRun=true``): true or false, nothing else, so that a misspelt dryRun never
# posts for real. And parameters with a value from a fixed set or a number: never empty.
FLAG_PARAMETERS = frozenset({"dryRun", "deleted", "nonZero", "rolledUp"})
NOT_EMPTY_PARAMETERS = frozenset({"limit", "sort_order", "order"})


def refuse_empty_values(request: Request) -> None:
    """An empty date or id (``?at=``, ``?ledgerId=``) is a malformed one, refused with the code a
    malformed one gets (0077, 0082); so is an empty limit or sort order, and a switch that is
    neither true nor false. django-filter and a view's ``if raw:`` would take it for
    an absent parameter and answer everything, or at the current time, instead."""
    params = request.query_params
    if not params:
        return
    for name, values in params.lists():
        if name in FLAG_PARAMETERS:
            _bool_param(request, name)  # refuses anything but true or false (1 or 0)
        if "" not in values:
            continue
        if name in DATE_PARAMETERS:
            parse_timestamp("", field=name)
        if name in NOT_EMPTY_PARAMETERS or name in ID_PARAMETERS:
            message = ("Enter a valid UUID; " if name in ID_PARAMETERS else "") + (
                "an empty value is not one."
            )
            raise invalid_parameter(name, message, f"Invalid query parameters: {name}: {message}")


COMMON_FILTERS = ("deleted", "metadata")


def known_filters(filterset_class: type[django_filters.FilterSet] | None) -> list[str]:
    """The query parameters a list filters by: its filterset's and the common ones."""
    names = list(filterset_class.base_filters) if filterset_class is not None else []
    return names + list(COMMON_FILTERS)


def run_filterset(
    filterset_class: type[django_filters.FilterSet] | None,
    queryset: QuerySet[Any],
    request: Request,
    *,
    common: bool = True,
) -> QuerySet[Any]:
    """The list's own filters, then (``common``) metadata and ``deleted``."""
    refuse_nul_characters(request)
    if filterset_class is not None:
        filterset = filterset_class(request.query_params, queryset=queryset, request=request)
        if not filterset.is_valid():
            fields = {k: " ".join(v) for k, v in filterset.errors.items()}
            raise LedgerError(
                ErrorCode.INVALID_QUERY_PARAMETER,
                "Invalid query parameters: " + "; ".join(f"{k}: {v}" for k, v in fields.items()),
                fields=fields,
            )
        queryset = filterset.qs
    return apply_common_filters(queryset, request) if common else queryset
