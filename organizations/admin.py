"""Staff admin for organizations, ledgers, portfolios, products, accounts and API tokens.

Resources are created and changed through their services (``admin_tools.ResourceAdmin``):
their invariants (materialised organization paths, balance rows, external accounts, soft
deletes) live there. The admin never hard-deletes, and deactivates (soft-deletes) through the
same services as the API's DELETE. Identity fields are read-only once an object exists.

The hierarchy is walked by links: an organization links to its ledgers, a ledger to its
accounts, templates, transactions, dashboard and posting page. Lists are narrowed with
``?organization=<id>``, ``?ledger=<id>`` or ``?account=<id>`` (``scope_filter``), which show
the chosen parent in the sidebar at the cost of one query; an add form opened from a narrowed
list starts with that parent chosen.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.safestring import SafeString

from ledgerproject.admin_base import LedgerModelAdmin
from ledgerproject.amounts import format_amount
from organizations import contents, monitors, services
from organizations.admin_overdraft import AccountForm
from organizations.admin_tools import (  # noqa: F401 - re-exported for the other apps' admins
    RESOURCE_READONLY,
    DeletedFilter,
    ReasonForm,
    ReasonToAct,
    ResourceAdmin,
    admin_link,
    admin_url,
    filled_in,
    links,
    reason_field,
    scope_filter,
)
from organizations.models import (
    ACCOUNT_STATUSES,
    Account,
    ApiToken,
    BalanceMonitor,
    Ledger,
    Organization,
    Portfolio,
    Product,
)


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
    autocomplete_fields = ("parent",)
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

    add_fields = ("legal_name", "legal_document", "doing_business_as", "parent")
    add_required = ("legal_name", "legal_document")

    def create_one(self, data: dict[str, Any]) -> Organization:
        parent = data.pop("parent", None)
        return services.organization_create(
            parent_id=parent.pk if parent else None, **filled_in(data)
        )

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
            (admin_url("transactions.scheduledposting", ledger=ledger_id), "scheduled postings"),
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
        "time_zone",
        "closed_through",
        "max_rate_age",
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

    add_fields = add_required = ("organization", "name")
    reason_fields = ("status_code", "time_zone", "closed_through")

    def explain_change(self, obj: Ledger, name: str, old: Any, new: Any) -> str:
        if name == "closed_through" and new is not None and (old is None or new > old):
            return (
                f"closes the books through {new} ({obj.time_zone}): a posting, reversal or "
                "commit effective on or before that day is refused (0124), and only a user who "
                "may reopen a period can undo it"
            )
        if name == "closed_through":
            since = f"after {new}" if new is not None else "of the ledger's whole past"
            return (
                f"reopens the days {since} (closed through {old} until now): postings may be "
                "effective in them again, changing the trial balance of those days"
            )
        if name == "time_zone":
            return (
                f"time zone: {old} → {new}: effective days, closed periods, the trial balance "
                f"and the period reports count days in {new} from now on"
            )
        return super().explain_change(obj, name, old, new)

    def create_one(self, data: dict[str, Any]) -> Ledger:
        return services.ledger_create(organization=data["organization"], name=data["name"])

    def update_one(self, obj: Ledger, data: dict[str, Any]) -> Ledger:
        return services.ledger_update(ledger=obj, data=data)

    def update_for(self, request: HttpRequest) -> Any:
        """Reopening a closed period needs a permission of its own."""
        may_reopen = request.user.has_perm("organizations.reopen_period")
        return lambda obj, data: services.ledger_update(
            ledger=obj, data=data, may_reopen=may_reopen
        )

    def deactivate_one(self, obj: Ledger) -> None:
        services.ledger_delete(ledger=obj)


@admin.register(Portfolio)
class PortfolioAdmin(ResourceAdmin):
    list_display = ("name", "entity_id", "ledger", "organization", "status_code", "created_at")
    list_filter = (scope_filter("ledger", Ledger), DeletedFilter, "status_code")
    search_fields = ("name", "entity_id", "=id")
    list_select_related = ("ledger", "organization")
    autocomplete_fields = ("organization", "ledger")
    readonly_fields = (*RESOURCE_READONLY, "organization", "ledger")

    add_fields = ("ledger", "name", "entity_id")
    add_required = ("ledger", "name")

    def create_one(self, data: dict[str, Any]) -> Portfolio:
        return contents.portfolio_create(**filled_in(data))

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
    autocomplete_fields = ("organization", "ledger")
    readonly_fields = (*RESOURCE_READONLY, "organization", "ledger")

    add_fields = ("ledger", "name", "status_code", "status_description")
    add_required = ("ledger", "name")

    def create_one(self, data: dict[str, Any]) -> Product:
        return contents.product_create(**filled_in(data))

    def update_one(self, obj: Product, data: dict[str, Any]) -> Product:
        return contents.product_update(product=obj, data=data)

    def deactivate_one(self, obj: Product) -> None:
        contents.product_delete(product=obj)


class BalanceMonitorForm(forms.ModelForm):
    threshold = forms.IntegerField(
        help_text="An integer amount at the scale below (2500 at 2 is 25.00)."
    )
    tree = forms.BooleanField(
        required=False,
        label="Watch the account's tree",
        help_text="Watch the rolled-up balance of the account and every account under it.",
    )

    class Meta:
        model = BalanceMonitor
        fields = (
            "ledger", "account", "tree", "asset_code", "measure", "condition", "threshold",
            "threshold_scale", "description", "status_code", "status_description", "metadata",
        )  # fmt: skip
        labels = {"asset_code": "Asset (tree monitors)"}
        help_texts = {
            "asset_code": "The asset of the tree's balances to add up; the account's own if "
            "left empty.",
        }


@admin.register(BalanceMonitor)
class BalanceMonitorAdmin(ResourceAdmin):
    """Balance monitors (docs/BALANCE-MONITORS.md), made and changed through their service."""

    form = BalanceMonitorForm
    list_display = (
        "account", "tree_text", "asset_code", "measure", "condition", "threshold_text", "holds",
        "last_triggered_at", "description", "ledger",
    )  # fmt: skip
    list_filter = (
        scope_filter("ledger", Ledger), DeletedFilter, "tree", "measure", "condition", "holds",
    )  # fmt: skip
    search_fields = ("description", "account__alias", "=id")
    list_select_related = ("account", "ledger")
    autocomplete_fields = ("organization", "ledger", "account")
    readonly_fields = (
        *RESOURCE_READONLY, "organization", "ledger", "account", "tree", "asset_code",
        "measure", "holds", "seen", "last_triggered_at",
    )  # fmt: skip
    add_fields = (
        "ledger", "account", "tree", "asset_code", "measure", "condition", "threshold",
        "threshold_scale", "description",
    )  # fmt: skip
    add_required = ("ledger", "account", "measure", "condition", "threshold")

    @admin.display(description="threshold")
    def threshold_text(self, monitor: BalanceMonitor) -> str:
        return format_amount(monitor.threshold, monitor.threshold_scale)

    @admin.display(description="watches", ordering="tree")
    def tree_text(self, monitor: BalanceMonitor) -> str:
        return "the account's tree" if monitor.tree else "the account"

    def create_one(self, data: dict[str, Any]) -> BalanceMonitor:
        threshold = {"amount": data.pop("threshold"), "scale": data.pop("threshold_scale") or 0}
        return monitors.monitor_create(
            ledger=data.pop("ledger"),
            account_id=data.pop("account").pk,
            threshold=threshold,
            tree=bool(data.pop("tree", False)),
            asset_code=data.pop("asset_code", None) or None,
            description=data.pop("description") or "",
            **data,
        )

    def update_one(self, obj: BalanceMonitor, data: dict[str, Any]) -> BalanceMonitor:
        if "threshold" in data or "threshold_scale" in data:
            data["threshold"] = {
                "amount": data.pop("threshold", obj.threshold),
                "scale": data.pop("threshold_scale", obj.threshold_scale),
            }
        return monitors.monitor_update(monitor=obj, data=data)

    def deactivate_one(self, obj: BalanceMonitor) -> None:
        monitors.monitor_delete(monitor=obj)


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
        "account_page",
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
    autocomplete_fields = ("organization", "ledger", "portfolio", "product", "parent_account")
    readonly_fields = (
        *RESOURCE_READONLY,
        "organization",
        "ledger",
        "alias",
        "type",
        "asset_code",
        "portfolio",
        "product",
        "available",
        "on_hold",
        "account_page",
    )

    @admin.display(description="available")
    def available(self, obj: Account) -> str:
        balance = getattr(obj, "balance", None)
        return (
            "-"
            if balance is None
            else format_amount(balance.available, balance.scale, obj.asset_code)
        )

    @admin.display(description="on hold")
    def on_hold(self, obj: Account) -> str:
        balance = getattr(obj, "balance", None)
        return (
            "-"
            if balance is None
            else format_amount(balance.on_hold, balance.scale, obj.asset_code)
        )

    @admin.display(description="page")
    def account_page(self, obj: Account) -> SafeString:
        """Its page (balance, history, statement: ``transactions.admin_account``)."""
        return links([(admin_url(Account, "page", obj.pk), "account page")])

    add_fields = (
        "ledger",
        "name",
        "alias",
        "asset_code",
        "type",
        "portfolio",
        "product",
        "parent_account",
        "entity_id",
        "allow_sending",
        "allow_receiving",
    )
    add_required = ("ledger", "asset_code")
    reason_fields = ("status_code", "allow_sending", "allow_receiving", "overdraft_limit")

    def explain_change(self, obj: Account, name: str, old: Any, new: Any) -> str:
        if name == "status_code" and new in ACCOUNT_STATUSES:
            return (
                f"status: {old} → {new}: the account {ACCOUNT_STATUSES[new].effect} in every "
                "posting from now on (a refused leg is 0024), narrowed further by allow "
                "sending and allow receiving"
            )
        if name in ("allow_sending", "allow_receiving"):
            verb = "send" if name == "allow_sending" else "receive"
            return (
                f"the account may {verb} again, as far as its status lets it"
                if new
                else f"the account no longer may {verb}: a posting that makes it {verb} is "
                "refused (0024)"
            )
        if name == "overdraft_limit" and new is not None:
            limit = format_amount(new["amount"], new["scale"], obj.asset_code)
            return (
                f"overdraft limit: {old} → {limit}: the available balance may go down to "
                f"minus {limit}"
            )
        return super().explain_change(obj, name, old, new)

    def create_one(self, data: dict[str, Any]) -> Account:
        for name in ("portfolio", "product", "parent_account"):
            chosen = data.pop(name, None)
            data[f"{name}_id"] = chosen.pk if chosen else None
        return contents.account_create(**filled_in(data))

    def update_one(self, obj: Account, data: dict[str, Any]) -> Account:
        if "parent_account_id" in data:  # the form's choice is an account: the service takes ids
            parent = data["parent_account_id"]
            data = {**data, "parent_account_id": parent.pk if parent else None}
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
