"""Organization, ledger, portfolio, product and account endpoints: thin views over the
services."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from ledgerproject.api.authentication import principal_of
from ledgerproject.api.filters import run_filterset
from ledgerproject.api.pagination import KeysetPage
from ledgerproject.api.schema import (
    COMMON_ERRORS,
    error_responses,
    page_parameters,
    text_parameter,
)
from ledgerproject.api.views import CollectionView, ItemView, ScopedAPIView
from organizations import contents, filters, monitors, rollups, selectors, services
from organizations import serializers as s
from organizations.models import (
    Account,
    BalanceMonitor,
    Ledger,
    Organization,
    Portfolio,
    Product,
)
from organizations.selectors import organizations_visible

ERRORS = error_responses(*COMMON_ERRORS)


class OrganizationCollection(CollectionView):
    principal_scoped = True  # the organizations the token reaches, filtered below
    model = Organization
    noun = "organization"
    output_serializer = s.OrganizationOut
    create_serializer = s.OrganizationCreateIn

    def get_queryset(self) -> QuerySet[Organization]:
        return organizations_visible(self.principal)

    def perform_create(self, data: dict[str, Any]) -> Organization:
        return services.organization_create(principal=self.principal, **data)


class OrganizationItem(ItemView):
    model = Organization
    noun = "organization"
    output_serializer = s.OrganizationOut
    update_serializer = s.OrganizationUpdateIn

    def get_object(self) -> Organization:
        return self.organization

    def perform_update(self, obj: Organization, data: dict[str, Any]) -> Organization:
        return services.organization_update(organization=obj, principal=self.principal, data=data)

    def perform_delete(self, obj: Organization) -> None:
        services.organization_delete(organization=obj, principal=self.principal)


class LedgerCollection(CollectionView):
    model = Ledger
    noun = "ledger"
    output_serializer = s.LedgerOut
    create_serializer = s.LedgerCreateIn

    def perform_create(self, data: dict[str, Any]) -> Ledger:
        return services.ledger_create(organization=self.organization, **data)


class LedgerItem(ItemView):
    model = Ledger
    noun = "ledger"
    output_serializer = s.LedgerOut
    update_serializer = s.LedgerUpdateIn

    def get_object(self) -> Ledger:
        return self.ledger

    def perform_update(self, obj: Ledger, data: dict[str, Any]) -> Ledger:
        # Reopening a closed period: only a token that reaches everything and may write.
        principal = principal_of(self.request)
        may_reopen = not (principal.is_limited or principal.read_only)
        return services.ledger_update(ledger=obj, data=data, may_reopen=may_reopen)

    def perform_delete(self, obj: Ledger) -> None:
        services.ledger_delete(ledger=obj)


class PortfolioCollection(CollectionView):
    """Portfolios of a ledger: list (filters entityId, status, metadata) and create."""

    model = Portfolio
    noun = "portfolio"
    output_serializer = s.PortfolioOut
    create_serializer = s.PortfolioCreateIn
    filterset_class = filters.PortfolioFilter

    def perform_create(self, data: dict[str, Any]) -> Portfolio:
        return contents.portfolio_create(ledger=self.ledger, **data)


class PortfolioItem(ItemView):
    """One portfolio: read, update (name, entityId, status, metadata), soft-delete."""

    model = Portfolio
    noun = "portfolio"
    output_serializer = s.PortfolioOut
    update_serializer = s.PortfolioUpdateIn

    def perform_update(self, obj: Portfolio, data: dict[str, Any]) -> Portfolio:
        return contents.portfolio_update(portfolio=obj, data=data)

    def perform_delete(self, obj: Portfolio) -> None:
        contents.portfolio_delete(portfolio=obj)


class ProductCollection(CollectionView):
    """Products of a ledger: list (filters status, ledgerId, metadata) and create; names
    are unique among the ledger's active products (409 0015)."""

    model = Product
    noun = "product"
    output_serializer = s.ProductOut
    create_serializer = s.ProductCreateIn
    filterset_class = filters.ProductFilter

    def perform_create(self, data: dict[str, Any]) -> Product:
        return contents.product_create(ledger=self.ledger, **data)


class ProductItem(ItemView):
    """One product: read, update (name, status, metadata), soft-delete."""

    model = Product
    noun = "product"
    output_serializer = s.ProductOut
    update_serializer = s.ProductUpdateIn

    def perform_update(self, obj: Product, data: dict[str, Any]) -> Product:
        return contents.product_update(product=obj, data=data)

    def perform_delete(self, obj: Product) -> None:
        contents.product_delete(product=obj)


class BalanceMonitorCollection(CollectionView):
    """Balance monitors of a ledger: list (filters accountId, status, metadata) and create
    (``organizations.monitors``)."""

    model = BalanceMonitor
    noun = "balance monitor"
    output_serializer = s.BalanceMonitorOut
    create_serializer = s.BalanceMonitorCreateIn
    filterset_class = filters.BalanceMonitorFilter

    def perform_create(self, data: dict[str, Any]) -> BalanceMonitor:
        return monitors.monitor_create(ledger=self.ledger, **data)


class BalanceMonitorItem(ItemView):
    """One balance monitor: read, update (threshold, condition, description, status,
    metadata), soft-delete."""

    model = BalanceMonitor
    noun = "balance monitor"
    output_serializer = s.BalanceMonitorOut
    update_serializer = s.BalanceMonitorUpdateIn

    def perform_update(self, obj: BalanceMonitor, data: dict[str, Any]) -> BalanceMonitor:
        return monitors.monitor_update(monitor=obj, data=data)

    def perform_delete(self, obj: BalanceMonitor) -> None:
        monitors.monitor_delete(monitor=obj)


class AccountCollection(CollectionView):
    """Accounts of a ledger with their balances: list (filters alias, assetCode, type,
    productId, portfolioId, entityId, status, metadata) and create."""

    model = Account
    noun = "account"
    output_serializer = s.AccountOut
    create_serializer = s.AccountCreateIn
    filterset_class = filters.AccountFilter
    select_related = ("balance",)

    def perform_create(self, data: dict[str, Any]) -> Account:
        return contents.account_create(ledger=self.ledger, **data)

    def annotate_page(self, rows: list[Any]) -> None:
        if self.request.query_params.get("rolledUp") == "true":
            totals = rollups.rolled_up_now(self.ledger, [row.pk for row in rows])
            for row in rows:
                row.rolled_up_balances = rollups.as_list(totals.get(row.pk, {}))


class AccountItem(ItemView):
    """One account: read, update, soft-delete (only at zero balance, 422 0012). External
    accounts cannot be changed or deleted (422 0074)."""

    model = Account
    noun = "account"
    output_serializer = s.AccountOut
    update_serializer = s.AccountUpdateIn
    select_related = ("balance",)

    def perform_update(self, obj: Account, data: dict[str, Any]) -> Account:
        return contents.account_update(account=obj, data=data)

    def perform_delete(self, obj: Account) -> None:
        contents.account_delete(account=obj)


class AccountByAlias(ScopedAPIView):
    """``GET .../accounts/alias/{alias}``: the active account with that alias (URL-encoded,
    ``@external/BRL`` as ``%40external%2FBRL``; the leading ``@`` may be left out)."""

    @extend_schema(operation_id="accounts_by_alias", responses={200: s.AccountOut, **ERRORS})
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        account = selectors.account_by_alias(self.ledger, kwargs["alias"])
        return Response(s.AccountOut(account).data)


BALANCE_PARAMS = [
    *page_parameters(),
    text_parameter("alias", description="The account's alias."),
    text_parameter("assetCode"),
    OpenApiParameter(
        "nonZero", str, enum=["true", "false"], description="true: available or onHold not 0."
    ),
]


class BalanceCollection(ScopedAPIView):
    """``GET .../balances``: every account's balance, keyset-paged like every list."""

    def balances(self) -> QuerySet[Any]:
        return selectors.balances_of(self.ledger)

    @extend_schema(
        parameters=BALANCE_PARAMS, responses={200: s.LedgerBalanceOut(many=True), **ERRORS}
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        page = KeysetPage(request, known=filters.BalanceFilter.base_filters)
        rows = page.slice(run_filterset(filters.BalanceFilter, self.balances(), request,
                                        common=False))  # fmt: skip
        return page.response(s.LedgerBalanceOut(rows, many=True).data)


class AccountBalances(BalanceCollection):
    """``GET .../accounts/{id}/balances``: the account's balances (one per account today),
    as a list so that a client reads both resources alike."""

    def balances(self) -> QuerySet[Any]:
        account = self.get_scoped(Account.objects.all(), self.kwargs["account_id"], "account")
        return super().balances().filter(account_id=account.pk)
