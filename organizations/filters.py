"""List filters for portfolios, products and accounts (metadata and ``deleted`` are common to
every list and applied by ``ledgerproject.api.filters``)."""

from __future__ import annotations

from typing import Any

import django_filters
from django.db.models import Q, QuerySet

from ledgerproject.api.filters import MultiValueFilter


class PortfolioFilter(django_filters.FilterSet):
    entityId = django_filters.CharFilter(field_name="entity_id")
    status = MultiValueFilter(field_name="status_code")


class ProductFilter(django_filters.FilterSet):
    status = MultiValueFilter(field_name="status_code")
    ledgerId = django_filters.UUIDFilter(field_name="ledger_id")


class AccountFilter(django_filters.FilterSet):
    alias = django_filters.CharFilter(field_name="alias")
    assetCode = django_filters.CharFilter(field_name="asset_code")
    type = django_filters.CharFilter(field_name="type")
    productId = django_filters.UUIDFilter(field_name="product_id")
    portfolioId = django_filters.UUIDFilter(field_name="portfolio_id")
    entityId = django_filters.CharFilter(field_name="entity_id")
    status = MultiValueFilter(field_name="status_code")
    parentAccountId = django_filters.UUIDFilter(
        field_name="parent_account_id", help_text="The accounts right under this one in the tree."
    )
    rolledUp = django_filters.ChoiceFilter(
        choices=[("true", "true"), ("false", "false")],
        method="filter_rolled_up",
        help_text="true: each account also with rolledUpBalances, its balance plus all its "
        "descendants' per asset (docs/ACCOUNT-TREES.md).",
    )

    def filter_rolled_up(self, queryset: QuerySet[Any], name: str, value: str) -> Any:
        """Not a filter: what the list shows (``AccountCollection.annotate_page``)."""
        return queryset


class BalanceFilter(django_filters.FilterSet):
    alias = django_filters.CharFilter(field_name="account__alias")
    assetCode = django_filters.CharFilter(field_name="asset_code")
    nonZero = django_filters.ChoiceFilter(
        choices=[("true", "true"), ("false", "false")], method="filter_non_zero"
    )

    def filter_non_zero(self, queryset: QuerySet[Any], name: str, value: str) -> Any:
        held = ~Q(available=0) | ~Q(on_hold=0)
        return queryset.filter(held) if value == "true" else queryset.exclude(held)


class BalanceMonitorFilter(django_filters.FilterSet):
    accountId = django_filters.UUIDFilter(field_name="account_id")
    status = MultiValueFilter(field_name="status_code")
