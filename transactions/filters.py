"""Query filters of the transaction list: the specification's names, and the effective dates'."""

from __future__ import annotations

from typing import Any

import django_filters
from django.db.models import QuerySet

from ledgerproject.api.filters import MultiValueFilter
from ledgerproject.formats import parse_timestamp


class TransactionFilter(django_filters.FilterSet):
    beginDate = django_filters.CharFilter(method="filter_begin")
    endDate = django_filters.CharFilter(method="filter_end")
    assetCode = django_filters.CharFilter(field_name="asset_code")
    status = MultiValueFilter(field_name="status")
    type = django_filters.CharFilter(field_name="type")
    parentTransactionId = django_filters.UUIDFilter(field_name="parent_id")
    # The other time axis: when the money moved (docs/TIME.md).
    effectiveFrom = django_filters.CharFilter(method="filter_effective_from")
    effectiveTo = django_filters.CharFilter(method="filter_effective_to")

    def filter_begin(self, queryset: QuerySet[Any], name: str, value: str) -> QuerySet[Any]:
        return queryset.filter(created_at__gte=parse_timestamp(value, field=name))

    def filter_end(self, queryset: QuerySet[Any], name: str, value: str) -> QuerySet[Any]:
        return queryset.filter(created_at__lte=parse_timestamp(value, field=name, end_of_day=True))

    def filter_effective_from(
        self, queryset: QuerySet[Any], name: str, value: str
    ) -> QuerySet[Any]:
        return queryset.filter(effective_at__gte=parse_timestamp(value, field=name))

    def filter_effective_to(self, queryset: QuerySet[Any], name: str, value: str) -> QuerySet[Any]:
        return queryset.filter(
            effective_at__lte=parse_timestamp(value, field=name, end_of_day=True)
        )


class ScheduledPostingFilter(django_filters.FilterSet):
    status = MultiValueFilter(field_name="status")
