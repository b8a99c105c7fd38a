"""Staff admin for organizations, ledgers, portfolios, products, accounts and API tokens.

Resources are created and deleted through the API (or, for tokens, through
``organizations.services``): their invariants (materialised organization paths, balance rows,
external accounts, soft deletes) live in the services. The admin therefore browses everything
and edits only the free-form fields; identity fields are read-only, and it never hard-deletes.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from organizations import services
from organizations.models import Account, ApiToken, Ledger, Organization, Portfolio, Product

RESOURCE_READONLY = ("id", "created_at", "updated_at", "deleted_at")


class ResourceAdmin(admin.ModelAdmin):
    """Browse and edit name/status/metadata; creation and deletion go through the API."""

    list_per_page = 50
    show_full_result_count = False

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class DeletedFilter(admin.SimpleListFilter):
    title = "deleted"
    parameter_name = "deleted"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("no", "Active"), ("yes", "Deleted")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value() == "no":
            return queryset.filter(deleted_at__isnull=True)
        if self.value() == "yes":
            return queryset.filter(deleted_at__isnull=False)
        return queryset


@admin.register(Organization)
class OrganizationAdmin(ResourceAdmin):
    list_display = ("legal_name", "legal_document", "parent", "status_code", "created_at")
    list_filter = (DeletedFilter, "status_code")
    search_fields = ("legal_name", "legal_document", "doing_business_as", "=id")
    list_select_related = ("parent",)
    raw_id_fields = ("parent",)
    readonly_fields = (*RESOURCE_READONLY, "parent", "path", "legal_document")
    fields = (
        "id",
        "legal_name",
        "legal_document",
        "doing_business_as",
        "parent",
        "path",
        "address",
        "status_code",
        "status_description",
        "metadata",
        "created_at",
        "updated_at",
        "deleted_at",
    )


@admin.register(Ledger)
class LedgerAdmin(ResourceAdmin):
    list_display = ("name", "organization", "status_code", "created_at", "deleted_at")
    list_filter = (DeletedFilter, "status_code")
    search_fields = ("name", "=id", "organization__legal_name")
    list_select_related = ("organization",)
    autocomplete_fields = ("organization",)
    readonly_fields = (*RESOURCE_READONLY, "organization")


@admin.register(Portfolio)
class PortfolioAdmin(ResourceAdmin):
    list_display = ("name", "entity_id", "ledger", "organization", "status_code", "created_at")
    list_filter = (DeletedFilter, "status_code")
    search_fields = ("name", "entity_id", "=id")
    list_select_related = ("ledger", "organization")
    raw_id_fields = ("organization", "ledger")
    readonly_fields = (*RESOURCE_READONLY, "organization", "ledger")


@admin.register(Product)
class ProductAdmin(ResourceAdmin):
    list_display = ("name", "ledger", "organization", "status_code", "created_at")
    list_filter = (DeletedFilter, "status_code")
    search_fields = ("name", "=id")
    list_select_related = ("ledger", "organization")
    raw_id_fields = ("organization", "ledger")
    readonly_fields = (*RESOURCE_READONLY, "organization", "ledger")


@admin.register(Account)
class AccountAdmin(ResourceAdmin):
    list_display = (
        "alias",
        "name",
        "type",
        "asset_code",
        "ledger",
        "available",
        "on_hold",
        "status_code",
        "created_at",
    )
    list_filter = (DeletedFilter, "type", "status_code", "allow_sending", "allow_receiving")
    search_fields = ("alias", "name", "entity_id", "asset_code", "=id")
    list_select_related = ("ledger", "balance")
    raw_id_fields = ("organization", "ledger", "portfolio", "product", "parent_account")
    readonly_fields = (
        *RESOURCE_READONLY,
        "organization",
        "ledger",
        "alias",
        "type",
        "asset_code",
        "portfolio",
        "product",
        "parent_account",
        "available",
        "on_hold",
    )

    @admin.display(description="available")
    def available(self, obj: Account) -> str:
        balance = getattr(obj, "balance", None)
        return "-" if balance is None else f"{balance.available} (scale {balance.scale})"

    @admin.display(description="on hold")
    def on_hold(self, obj: Account) -> str:
        balance = getattr(obj, "balance", None)
        return "-" if balance is None else f"{balance.on_hold} (scale {balance.scale})"


class ApiTokenAddForm(forms.ModelForm):
    """The secret is generated by ``token_create``; staff pick a lifetime in days."""

    expires_in_days = forms.IntegerField(
        required=False, min_value=1, help_text="Leave empty for a token that does not expire."
    )

    class Meta:
        model = ApiToken
        fields = ("name", "organizations", "read_only")


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("name", "prefix", "read_only", "expires_at", "revoked_at", "created_at")
    list_filter = ("read_only", ("revoked_at", admin.EmptyFieldListFilter), "expires_at")
    search_fields = ("name", "prefix")
    autocomplete_fields = ("organizations",)
    readonly_fields = ("prefix", "created_at", "updated_at", "revoked_at")
    fields = (
        "name",
        "prefix",
        "organizations",
        "read_only",
        "expires_at",
        "revoked_at",
        "created_at",
        "updated_at",
    )
    actions = ("revoke",)

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None:
            return ("name", "organizations", "read_only", "expires_in_days")
        return self.fields

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return () if obj is None else self.readonly_fields

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any):
        if obj is None:
            kwargs["form"] = ApiTokenAddForm
        return super().get_form(request, obj, change=change, **kwargs)

    def save_model(self, request: HttpRequest, obj: ApiToken, form: Any, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        data = form.cleaned_data
        token, raw = services.token_create(
            name=data["name"],
            organization_ids=[o.pk for o in data["organizations"]],
            read_only=data["read_only"],
            expires_in_days=data.get("expires_in_days"),
        )
        # The admin goes on with ``obj`` (for its redirect and log entry): make it the saved token.
        for field in ApiToken._meta.concrete_fields:
            setattr(obj, field.attname, getattr(token, field.attname))
        obj._state.adding = False
        obj._state.db = token._state.db
        messages.success(
            request,
            f"The token '{token.name}' is: {raw} — copy it now, it will not be shown again.",
        )

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        if change:  # on add, token_create has already linked the organizations
            super().save_related(request, form, formsets, change)

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        for token in queryset:
            services.token_revoke(name=token.name)
        messages.success(request, f"Revoked {queryset.count()} token(s).")
