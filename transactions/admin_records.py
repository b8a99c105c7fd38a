"""Staff admin for the ledger records beside transactions: operations (an account's
statement), balances and idempotency keys. Read-only (every balance change is an append-only
operation written by the posting service); each list exports as CSV, streamed."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html
from django.utils.safestring import SafeString

from ledgerproject.admin_base import LedgerModelAdmin
from ledgerproject.admin_csv import CsvExportMixin
from ledgerproject.amounts import format_amount, format_balance, rescale
from organizations.admin import admin_link, admin_url, links, scope_filter
from organizations.models import Account, Balance, Ledger
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

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        """A transaction's operations are part of its page: whoever may view the transaction
        sees them, without the permission on the operation list (an internal record)."""
        return request.user.has_perm("transactions.view_transaction")

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


def full_id(pk: Any) -> SafeString:
    """The whole id (UUIDv7 ids share their first characters, the time), selected whole by one
    click so that it can be copied."""
    return format_html('<code class="ledger-id" style="user-select: all">{}</code>', pk)


def _at_row_scale(op: Operation, value: int, scale: int) -> str:
    """A figure of a statement row at the scale of the balance after it: the largest the row
    knows (a balance's scale never falls, and a posting's amount raises it to its own), so
    every money figure of a row is written with the same digits, exactly."""
    return format_amount(rescale(value, scale, op.balance_scale_after), op.balance_scale_after)


@admin.register(Operation)
class OperationAdmin(CsvExportMixin, ReadOnlyAdmin):
    """An account's statement is this list narrowed to it (``?account=<id>``); its CSV is the
    statement's export."""

    list_display = (
        "created_at",
        "effective_at",
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
    csv_columns = (
        ("created_at", lambda op: op.created_at.isoformat()),
        ("effective_at", lambda op: op.effective_at.isoformat()),
        ("id", lambda op: op.pk),
        ("transaction_id", lambda op: op.transaction_id),
        ("account_alias", lambda op: op.account_alias),
        ("account_id", lambda op: op.account_id),
        ("type", lambda op: op.type),
        ("effect", lambda op: op.effect),
        ("amount", lambda op: _at_row_scale(op, op.amount, op.scale)),
        ("asset_code", lambda op: op.asset_code),
        (
            "available_before",
            lambda op: _at_row_scale(op, op.balance_available, op.balance_scale),
        ),
        ("on_hold_before", lambda op: _at_row_scale(op, op.balance_on_hold, op.balance_scale)),
        (
            "available_after",
            lambda op: format_amount(op.balance_available_after, op.balance_scale_after),
        ),
        (
            "on_hold_after",
            lambda op: format_amount(op.balance_on_hold_after, op.balance_scale_after),
        ),
        ("chart_of_accounts", lambda op: op.chart_of_accounts),
        ("description", lambda op: op.description),
    )
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
        "effective_at",
        "created_at",
    )
    fields = readonly_fields

    amount_text = OperationInline.amount_text
    balance_before = OperationInline.balance_before
    balance_after = OperationInline.balance_after
    account_link = OperationInline.account_link

    @admin.display(description="transaction")
    def transaction_link(self, op: Operation) -> SafeString | str:
        return admin_link(Transaction, op.transaction_id, op.transaction_id)


@admin.register(Balance)
class BalanceAdmin(CsvExportMixin, ReadOnlyAdmin):
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
    csv_columns = (
        ("account_alias", lambda b: b.account.alias),
        ("account_id", lambda b: b.account_id),
        ("asset_code", lambda b: b.asset_code),
        ("available", lambda b: format_amount(b.available, b.scale)),
        ("on_hold", lambda b: format_amount(b.on_hold, b.scale)),
        ("external", lambda b: "yes" if b.is_external else "no"),
        ("version", lambda b: b.version),
        ("updated_at", lambda b: b.updated_at.isoformat()),
        ("ledger_id", lambda b: b.ledger_id),
    )
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
        return admin_link(Transaction, record.transaction_id, record.transaction_id)
