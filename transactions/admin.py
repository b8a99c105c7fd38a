"""Staff admin for the ledger records: transactions, operations, balances, idempotency keys.

They are read-only here (no add, change or delete: every balance change is an append-only
operation written by the posting service). The only writes are the commit, revert and cancel
actions, which call the same services as the API and need the ``change_transaction``
permission; each selected transaction gets its own success or refusal message.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponseRedirect
from django.urls import path
from django.utils.html import format_html
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.safestring import SafeString

from ledgerproject.admin_base import LedgerModelAdmin
from ledgerproject.amounts import format_amount, format_balance
from ledgerproject.errors import LedgerError
from organizations.admin import LedgerAdmin, admin_link, admin_url, links, scope_filter
from organizations.models import Account, Balance, Ledger
from templates_dsl.models import TransactionTemplate
from transactions import admin_views, states
from transactions.models import IdempotencyKey, Operation, Transaction


class ReadOnlyAdmin(LedgerModelAdmin):
    """Viewable with the view (or change) permission; never added, changed or deleted here."""

    list_per_page = 50
    show_full_result_count = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class OperationInline(admin.TabularInline):
    model = Operation
    extra = 0
    can_delete = False
    show_change_link = True
    fields = (
        "account_link",
        "type",
        "effect",
        "amount_text",
        "balance_before",
        "balance_after",
        "chart_of_accounts",
        "description",
    )
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[Operation]:
        return super().get_queryset(request).order_by("created_at", "id")

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="account")
    def account_link(self, op: Operation) -> SafeString | str:
        return admin_link(Account, op.account_id, op.account_alias)

    @admin.display(description="amount")
    def amount_text(self, op: Operation) -> str:
        return format_amount(op.amount, op.scale, op.asset_code)

    @admin.display(description="balance before")
    def balance_before(self, op: Operation) -> str:
        return format_balance(
            op.balance_available, op.balance_on_hold, op.balance_scale, op.asset_code
        )

    @admin.display(description="balance after")
    def balance_after(self, op: Operation) -> str:
        return format_balance(
            op.balance_available_after,
            op.balance_on_hold_after,
            op.balance_scale_after,
            op.asset_code,
        )


def _short(pk: Any) -> str:
    return str(pk)[:8] + "…"


Service = Callable[..., Transaction]


@admin.register(Transaction)
class TransactionAdmin(ReadOnlyAdmin):
    list_display = (
        "short_id",
        "created_at",
        "type",
        "status",
        "amount_text",
        "source_text",
        "destination_text",
        "parent_link",
        "ledger",
    )
    list_filter = (
        scope_filter("ledger", Ledger),
        "status",
        "is_reversal",
        "asset_code",
        "created_at",
    )
    search_fields = ("=id", "type", "description", "=parent__id")
    list_select_related = ("ledger",)
    ordering = ("-created_at", "-id")
    inlines = (OperationInline,)
    actions = ("commit_transactions", "revert_transactions", "cancel_transactions")
    fields = (
        "id",
        "status",
        "type_link",
        "amount_text",
        "description",
        "source_text",
        "destination_text",
        "parent_link",
        "reversal_link",
        "ledger_link",
        "chart_of_accounts_group_name",
        "metadata",
        "created_at",
        "updated_at",
    )
    readonly_fields = fields

    def has_operate_permission(self, request: HttpRequest) -> bool:
        """Commit, revert and cancel write: they need the change permission on transactions."""
        opts = self.opts
        return request.user.has_perm(f"{opts.app_label}.change_{opts.model_name}")

    @admin.display(description="id", ordering="id")
    def short_id(self, tx: Transaction) -> str:
        return _short(tx.pk)

    @admin.display(description="amount")
    def amount_text(self, tx: Transaction) -> str:
        return format_amount(tx.amount, tx.scale, tx.asset_code)

    @admin.display(description="from")
    def source_text(self, tx: Transaction) -> str:
        return ", ".join(tx.source)

    @admin.display(description="to")
    def destination_text(self, tx: Transaction) -> str:
        return ", ".join(tx.destination)

    @admin.display(description="parent")
    def parent_link(self, tx: Transaction) -> SafeString | str:
        return admin_link(Transaction, tx.parent_id, _short(tx.parent_id))

    @admin.display(description="reverted by")
    def reversal_link(self, tx: Transaction) -> SafeString | str:
        reversal = Transaction.objects.filter(parent_id=tx.pk, is_reversal=True).first()
        return admin_link(Transaction, reversal.pk, reversal.pk) if reversal else "-"

    @admin.display(description="template")
    def type_link(self, tx: Transaction) -> SafeString | str:
        return (
            admin_link(TransactionTemplate, tx.template_id, tx.type) if tx.template_id else tx.type
        )

    @admin.display(description="ledger")
    def ledger_link(self, tx: Transaction) -> SafeString:
        return format_html(
            "{} ({})",
            admin_link(Ledger, tx.ledger_id, tx.ledger.name),
            links([(admin_url(Ledger, "dashboard", tx.ledger_id), "dashboard")]),
        )

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: Any = None
    ) -> Any:
        tx = Transaction.objects.filter(pk=object_id).only("type", "status").first()
        extra = {
            "can_operate": self.has_operate_permission(request),
            **({"subtitle": f"{tx.type} {tx.pk} ({tx.status})"} if tx else {}),
            **(extra_context or {}),
        }
        return super().change_view(request, object_id, form_url, extra_context=extra)

    def _run(self, request: HttpRequest, queryset: QuerySet[Transaction], verb: str) -> Any:
        service = states.ACTIONS[verb]
        for tx in queryset.select_related("ledger").order_by("created_at", "id"):
            try:
                result = service(ledger=tx.ledger, transaction_id=tx.pk)
            except LedgerError as exc:
                messages.error(
                    request, f"{_short(tx.pk)}: {verb} refused — {exc.error.code} {exc.description}"
                )
                continue
            if verb == "commit":
                text = f"{_short(tx.pk)}: committed, now {result.status}."
            else:
                text = format_html(
                    "{}: {} by {} ({}).",
                    _short(tx.pk),
                    "canceled" if verb == "cancel" or tx.status == tx.PRE_APPROVED else "reverted",
                    admin_link(Transaction, result.pk, _short(result.pk)),
                    result.status,
                )
            messages.success(request, text)
        back = request.POST.get("_return_to")
        if back and url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
            return HttpResponseRedirect(back)
        return None

    @admin.action(description="Commit the selected pending transactions", permissions=["operate"])
    def commit_transactions(self, request: HttpRequest, queryset: QuerySet[Transaction]) -> Any:
        return self._run(request, queryset, "commit")

    @admin.action(description="Revert the selected transactions", permissions=["operate"])
    def revert_transactions(self, request: HttpRequest, queryset: QuerySet[Transaction]) -> Any:
        return self._run(request, queryset, "revert")

    @admin.action(description="Cancel the selected pending transactions", permissions=["operate"])
    def cancel_transactions(self, request: HttpRequest, queryset: QuerySet[Transaction]) -> Any:
        return self._run(request, queryset, "cancel")


@admin.register(Operation)
class OperationAdmin(ReadOnlyAdmin):
    list_display = (
        "created_at",
        "account_alias",
        "type",
        "effect",
        "amount_text",
        "balance_before",
        "balance_after",
        "transaction_link",
        "ledger",
    )
    list_filter = (
        scope_filter("ledger", Ledger),
        scope_filter("account", Account),
        scope_filter("transaction", Transaction),
        "type",
        "effect",
        "asset_code",
    )
    search_fields = ("account_alias", "=id", "=transaction__id", "chart_of_accounts")
    list_select_related = ("ledger",)
    ordering = ("-created_at", "-id")
    readonly_fields = (
        "id",
        "transaction_link",
        "account_link",
        "type",
        "effect",
        "amount_text",
        "balance_before",
        "balance_after",
        "balance_version",
        "chart_of_accounts",
        "description",
        "metadata",
        "created_at",
    )
    fields = readonly_fields

    amount_text = OperationInline.amount_text
    balance_before = OperationInline.balance_before
    balance_after = OperationInline.balance_after
    account_link = OperationInline.account_link

    @admin.display(description="transaction")
    def transaction_link(self, op: Operation) -> SafeString | str:
        return admin_link(Transaction, op.transaction_id, _short(op.transaction_id))


@admin.register(Balance)
class BalanceAdmin(ReadOnlyAdmin):
    list_display = (
        "account_alias",
        "asset_code",
        "available_text",
        "on_hold_text",
        "version",
        "is_external",
        "ledger",
        "updated_at",
    )
    list_filter = (scope_filter("ledger", Ledger), "is_external", "asset_code")
    search_fields = ("account__alias", "=account__id", "asset_code")
    list_select_related = ("account", "ledger")
    fields = (
        "id",
        "account_link",
        "asset_code",
        "available_text",
        "on_hold_text",
        "scale",
        "version",
        "is_external",
        "updated_at",
    )
    readonly_fields = fields

    @admin.display(description="account", ordering="account__alias")
    def account_alias(self, balance: Balance) -> str:
        return balance.account.alias

    @admin.display(description="account")
    def account_link(self, balance: Balance) -> SafeString | str:
        return format_html(
            "{} ({})",
            admin_link(Account, balance.account_id, balance.account.alias),
            links([(admin_url(Operation, account=balance.account_id), "operations")]),
        )

    @admin.display(description="available", ordering="available")
    def available_text(self, balance: Balance) -> str:
        return format_amount(balance.available, balance.scale, balance.asset_code)

    @admin.display(description="on hold", ordering="on_hold")
    def on_hold_text(self, balance: Balance) -> str:
        return format_amount(balance.on_hold, balance.scale, balance.asset_code)


@admin.register(IdempotencyKey)
class IdempotencyKeyAdmin(ReadOnlyAdmin):
    list_display = (
        "key",
        "response_status",
        "transaction_link",
        "ledger",
        "created_at",
        "expires_at",
    )
    list_filter = (scope_filter("ledger", Ledger), "response_status")
    search_fields = ("key", "=transaction__id")
    list_select_related = ("ledger",)
    fields = (
        "key",
        "request_hash",
        "response_status",
        "transaction_link",
        "ledger",
        "response_body",
        "created_at",
        "expires_at",
    )
    readonly_fields = fields

    @admin.display(description="transaction")
    def transaction_link(self, record: IdempotencyKey) -> SafeString | str:
        return admin_link(Transaction, record.transaction_id, _short(record.transaction_id))


class LedgerBackOfficeAdmin(LedgerAdmin):
    """The ledger's admin with the pages of this app: its dashboard and its posting page
    (``organizations.admin`` links them by URL name and knows nothing of them)."""

    def get_urls(self) -> list[Any]:
        def view(func: Any) -> Any:
            def wrapped(request: HttpRequest, object_id: str) -> Any:
                return func(request, object_id, model_admin=self)

            return self.admin_site.admin_view(wrapped)

        info = self.opts.app_label, self.opts.model_name
        return [
            path(
                "<path:object_id>/dashboard/",
                view(admin_views.ledger_dashboard),
                name="{}_{}_dashboard".format(*info),
            ),
            path(
                "<path:object_id>/post/",
                view(admin_views.ledger_post),
                name="{}_{}_post".format(*info),
            ),
            *super().get_urls(),
        ]


admin.site.unregister(Ledger)
admin.site.register(Ledger, LedgerBackOfficeAdmin)
