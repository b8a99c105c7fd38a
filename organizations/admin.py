"""Staff admin for organizations, ledgers, portfolios, products, accounts and API tokens.

Resources are created through the API (or, for tokens, through ``organizations.services``):
their invariants (materialised organization paths, balance rows, external accounts, soft
deletes) live in the services. The admin therefore browses everything, edits only the
free-form fields (identity fields are read-only), never hard-deletes, and deactivates
(soft-deletes) through the same services as the API's DELETE.

The hierarchy is walked by links: an organization links to its ledgers, a ledger to its
accounts, templates, transactions, dashboard and posting page. Lists are narrowed with
``?organization=<id>``, ``?ledger=<id>`` or ``?account=<id>`` (``scope_filter``), which show
the chosen parent in the sidebar at the cost of one query.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.options import IncorrectLookupParameters
from django.db.models import Model, QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from ledgerproject.admin_base import LedgerModelAdmin
from ledgerproject.db import field_of
from ledgerproject.errors import LedgerError
from organizations import contents, services
from organizations.admin_overdraft import AccountForm
from organizations.models import Account, ApiToken, Ledger, Organization, Portfolio, Product

RESOURCE_READONLY = ("id", "created_at", "updated_at", "deleted_at")


def admin_url(
    model: type[Model] | Model | str, view: str = "changelist", *args: Any, **query: Any
) -> str:
    """The admin URL of a model's changelist (optionally filtered) or of one object's page.
    ``model`` may be a label (``"transactions.transaction"``): a page of an app further along
    is linked by its URL name, never imported."""
    if isinstance(model, str):
        app_label, model_name = model.lower().split(".")
    else:
        app_label, model_name = model._meta.app_label, model._meta.model_name or ""
    url = reverse(f"admin:{app_label}_{model_name}_{view}", args=args)
    if query:
        url += "?" + "&".join(f"{key}={value}" for key, value in query.items())
    return url


def admin_link(model: type[Model] | Model, pk: Any, text: Any) -> SafeString | str:
    if pk is None:
        return "-"
    return format_html('<a href="{}">{}</a>', admin_url(model, "change", pk), text)


def links(items: Iterable[tuple[str, str]]) -> SafeString:
    return format_html_join(" · ", '<a href="{}">{}</a>', items)


def scope_filter(field: str, model: type[Model]) -> type[admin.SimpleListFilter]:
    """A sidebar filter for ``?<field>=<id>``: shown only while it is in use, naming the
    chosen parent; a malformed id is an incorrect lookup (the admin's ``?e=1`` page)."""

    class ScopeFilter(admin.SimpleListFilter):
        title = model._meta.verbose_name
        parameter_name = field

        def _pk(self) -> uuid.UUID | None:
            value = self.value()
            if not value:
                return None
            try:
                return uuid.UUID(str(value))
            except ValueError as exc:
                raise IncorrectLookupParameters(f"{field}: not an id") from exc

        def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
            pk = self._pk()
            found = model._default_manager.filter(pk=pk).first() if pk else None
            return [(str(pk), str(found))] if found is not None else []

        def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
            pk = self._pk()
            return queryset.filter(**{f"{field}_id": pk}) if pk else queryset

    ScopeFilter.__name__ = f"{field.title()}ScopeFilter"
    return ScopeFilter


class ResourceAdmin(LedgerModelAdmin):
    """Browse and edit through the services: a change is written by the resource's update
    service while the form validates (inside the admin's transaction), so the admin refuses
    exactly what the API refuses and shows the same code and message on the form; deactivation
    (soft delete) goes through the delete service, each refusal shown as a message."""

    list_per_page = 50
    show_full_result_count = False
    actions = ("deactivate",)

    def update_one(self, obj: Any, data: dict[str, Any]) -> Any:
        """Write ``data`` (model field names) to ``obj`` through the resource's service."""
        raise NotImplementedError

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any):
        base = super().get_form(request, obj, change=change, **kwargs)
        return service_form(base, self.update_one) if change else base

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        if not change:
            super().save_model(request, obj, form, change)
        # A change was written by the service when the form validated.

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def deactivate_one(self, obj: Any) -> None:
        raise NotImplementedError

    @admin.action(
        description="Deactivate (soft-delete) the selected %(verbose_name_plural)s",
        permissions=["change"],
    )
    def deactivate(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        done: list[str] = []
        for obj in queryset:
            if obj.deleted_at is not None:
                messages.warning(request, f"{obj}: already deactivated.")
                continue
            try:
                self.deactivate_one(obj)
            except LedgerError as exc:
                messages.error(request, f"{obj}: refused — {exc.error.code} {exc.description}")
            else:
                done.append(str(obj))
        if done:
            names = self.model._meta.verbose_name_plural
            messages.success(request, f"Deactivated {len(done)} {names}: {', '.join(done)}.")


def service_form(base: type[forms.ModelForm], update: Any) -> type[forms.ModelForm]:
    """``base`` whose validation ends by writing the changed fields through ``update``; a
    refusal becomes the form's error, on the field it names when the form has it."""

    class ServiceForm(base):  # type: ignore[valid-type,misc]
        instance: Any

        def _post_clean(self) -> None:
            super()._post_clean()
            if self.errors or not self.changed_data:
                return
            model = self._meta.model
            own = {f.name for f in model._meta.concrete_fields}
            # A form field that is not the model's (the account's overdraft limit) is passed to
            # the service under its own name.
            data = {
                (field_of(model, name).attname if name in own else name): self.cleaned_data[name]
                for name in self.changed_data
            }
            current: Any = model._default_manager.get(pk=self.instance.pk)
            try:
                self.instance = update(current, data)
            except LedgerError as exc:
                self.add_error(_field_of(self, exc), f"{exc.error.code}: {exc.description}")

    return ServiceForm


def _field_of(form: forms.ModelForm, exc: LedgerError) -> str | None:
    for key in exc.fields or {}:
        name = re.sub(r"(?<!^)(?=[A-Z])", "_", key.split(".")[0]).lower()
        if name in form.fields:
            return name
    return None


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
    list_display = (
        "legal_name",
        "legal_document",
        "parent",
        "status_code",
        "ledgers_link",
        "created_at",
        "deleted_at",
    )
    list_filter = (DeletedFilter, "status_code")
    search_fields = ("legal_name", "legal_document", "doing_business_as", "=id")
    list_select_related = ("parent",)
    raw_id_fields = ("parent",)
    readonly_fields = (*RESOURCE_READONLY, "parent", "path", "legal_document", "ledgers")
    fields = (
        "id",
        "ledgers",
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

    @admin.display(description="ledgers")
    def ledgers_link(self, obj: Organization) -> SafeString:
        return links([(admin_url(Ledger, organization=obj.pk), "ledgers")])

    @admin.display(description="ledgers")
    def ledgers(self, obj: Organization) -> SafeString:
        rows = [
            (admin_url(Ledger, "change", ledger.pk), ledger.name)
            for ledger in Ledger.objects.filter(organization_id=obj.pk, deleted_at__isnull=True)
        ]
        rows.append((admin_url(Ledger, organization=obj.pk), "all ledgers, deleted too"))
        return links(rows)

    def update_one(self, obj: Organization, data: dict[str, Any]) -> Organization:
        return services.organization_update(organization=obj, data=data)

    def deactivate_one(self, obj: Organization) -> None:
        services.organization_delete(organization=obj)


def ledger_links(ledger_id: Any, *, full: bool = True) -> SafeString:
    """Where a ledger leads: its contents (lists filtered by it) and its own pages (the
    dashboard and posting page, which ``transactions.admin`` adds to the ledger's admin)."""
    items = [
        (admin_url(Ledger, "dashboard", ledger_id), "dashboard"),
        (admin_url(Ledger, "post", ledger_id), "post a transaction"),
        (admin_url(Account, ledger=ledger_id), "accounts"),
        (admin_url("templates_dsl.transactiontemplate", ledger=ledger_id), "templates"),
        (admin_url("transactions.transaction", ledger=ledger_id), "transactions"),
    ]
    if full:
        items += [
            (admin_url("instruments.instrument", ledger=ledger_id), "instruments"),
            (admin_url(Portfolio, ledger=ledger_id), "portfolios"),
            (admin_url(Product, ledger=ledger_id), "products"),
        ]
    return links(items)


@admin.register(Ledger)
class LedgerAdmin(ResourceAdmin):
    list_display = ("name", "organization", "status_code", "contents", "created_at", "deleted_at")
    list_filter = (scope_filter("organization", Organization), DeletedFilter, "status_code")
    search_fields = ("name", "=id", "organization__legal_name")
    list_select_related = ("organization",)
    autocomplete_fields = ("organization",)
    readonly_fields = (*RESOURCE_READONLY, "organization", "navigation")
    fields = (
        "id",
        "navigation",
        "organization",
        "name",
        "status_code",
        "status_description",
        "metadata",
        "created_at",
        "updated_at",
        "deleted_at",
    )

    @admin.display(description="contents")
    def contents(self, obj: Ledger) -> SafeString:
        return ledger_links(obj.pk, full=False)

    @admin.display(description="go to")
    def navigation(self, obj: Ledger) -> SafeString:
        return ledger_links(obj.pk)

    def update_one(self, obj: Ledger, data: dict[str, Any]) -> Ledger:
        return services.ledger_update(ledger=obj, data=data)

    def deactivate_one(self, obj: Ledger) -> None:
        services.ledger_delete(ledger=obj)


@admin.register(Portfolio)
class PortfolioAdmin(ResourceAdmin):
    list_display = ("name", "entity_id", "ledger", "organization", "status_code", "created_at")
    list_filter = (scope_filter("ledger", Ledger), DeletedFilter, "status_code")
    search_fields = ("name", "entity_id", "=id")
    list_select_related = ("ledger", "organization")
    raw_id_fields = ("organization", "ledger")
    readonly_fields = (*RESOURCE_READONLY, "organization", "ledger")

    def update_one(self, obj: Portfolio, data: dict[str, Any]) -> Portfolio:
        return contents.portfolio_update(portfolio=obj, data=data)

    def deactivate_one(self, obj: Portfolio) -> None:
        contents.portfolio_delete(portfolio=obj)


@admin.register(Product)
class ProductAdmin(ResourceAdmin):
    list_display = ("name", "ledger", "organization", "status_code", "created_at")
    list_filter = (scope_filter("ledger", Ledger), DeletedFilter, "status_code")
    search_fields = ("name", "=id")
    list_select_related = ("ledger", "organization")
    raw_id_fields = ("organization", "ledger")
    readonly_fields = (*RESOURCE_READONLY, "organization", "ledger")

    def update_one(self, obj: Product, data: dict[str, Any]) -> Product:
        return contents.product_update(product=obj, data=data)

    def deactivate_one(self, obj: Product) -> None:
        contents.product_delete(product=obj)


@admin.register(Account)
class AccountAdmin(ResourceAdmin):
    form = AccountForm
    list_display = (
        "alias",
        "name",
        "type",
        "asset_code",
        "ledger",
        "available",
        "on_hold",
        "status_code",
        "statement",
        "created_at",
    )
    list_filter = (
        scope_filter("ledger", Ledger),
        DeletedFilter,
        "type",
        "status_code",
        "allow_sending",
        "allow_receiving",
    )
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
        "statement",
    )

    @admin.display(description="available")
    def available(self, obj: Account) -> str:
        balance = getattr(obj, "balance", None)
        return "-" if balance is None else f"{balance.available} (scale {balance.scale})"

    @admin.display(description="on hold")
    def on_hold(self, obj: Account) -> str:
        balance = getattr(obj, "balance", None)
        return "-" if balance is None else f"{balance.on_hold} (scale {balance.scale})"

    @admin.display(description="statement")
    def statement(self, obj: Account) -> SafeString:
        return links([(admin_url("transactions.operation", account=obj.pk), "operations")])

    def update_one(self, obj: Account, data: dict[str, Any]) -> Account:
        return contents.account_update(account=obj, data=data)

    def deactivate_one(self, obj: Account) -> None:
        contents.account_delete(account=obj)


class ApiTokenAddForm(forms.ModelForm):
    """The secret is generated by ``token_create``; staff pick a lifetime in days."""

    expires_in_days = forms.IntegerField(
        required=False, min_value=1, help_text="Leave empty for a token that does not expire."
    )

    class Meta:
        model = ApiToken
        fields = ("name", "organizations", "read_only")


@admin.register(ApiToken)
class ApiTokenAdmin(LedgerModelAdmin):
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
        """A token's name, reach and rights are fixed once it exists (``token_create`` is the
        only write; to change them, revoke it and create another)."""
        return () if obj is None else self.fields

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any):
        if obj is None:
            kwargs["form"] = ApiTokenAddForm
        return super().get_form(request, obj, change=change, **kwargs)

    def save_model(self, request: HttpRequest, obj: ApiToken, form: Any, change: bool) -> None:
        if change:
            return  # every field is read-only once the token exists
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
        """Nothing: on add, ``token_create`` has linked the organizations; a change has none."""

    @admin.action(description="Revoke the selected tokens", permissions=["change"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        for token in queryset:
            services.token_revoke(name=token.name)
        messages.success(request, f"Revoked {queryset.count()} token(s).")
