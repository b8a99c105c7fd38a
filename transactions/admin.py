"""Staff admin for transactions (operations, balances and idempotency keys are in
``admin_records``), and the ledger's admin with its dashboard and posting page.

Transactions are read-only here (no add, change or delete: every balance change is an
append-only operation written by the posting service). The only writes are the commit, revert
and cancel actions, each confirmed with a preview and a reason first (``admin_actions``), which
call the same services as the API and need the ``change_transaction`` permission. The list
shows full ids, searches by account alias (``@alice``: the transactions with an operation on
it) and by metadata (``order=42``), and exports as CSV.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin
from django.db.models import Exists, OuterRef, QuerySet
from django.http import HttpRequest
from django.urls import path
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString

from ledgerproject import actors
from ledgerproject.admin_csv import CsvExportMixin
from ledgerproject.amounts import format_amount
from ledgerproject.metadata import filter_by_metadata
from organizations.admin import (
    AccountAdmin,
    LedgerAdmin,
    admin_link,
    admin_url,
    links,
    scope_filter,
)
from organizations.admin_tools import Proposed
from organizations.models import Account, Ledger
from templates_dsl.models import TransactionTemplate
from transactions import (  # noqa: F401 - admin_approvals registers its admins
    admin_account,
    admin_actions,
    admin_approvals,
    admin_posting,
    admin_reports,
    admin_scheduled,
    admin_trees,
    admin_views,
    approvals,
)
from transactions.admin_records import OperationInline, ReadOnlyAdmin, full_id
from transactions.models import Approval, ApprovalRule, Operation, Transaction
from transactions.partial import is_expired

# Registered by its own module: named here so that the admin's discovery imports it.
SCHEDULED_ADMIN = admin_scheduled.ScheduledPostingAdmin


@admin.register(Transaction)
class TransactionAdmin(CsvExportMixin, ReadOnlyAdmin):
    list_display = (
        "full_id",
        "created_at",
        "effective_at",
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
        "effective_at",
    )
    search_fields = ("=id", "type", "description", "=parent__id")
    search_help_text = (
        "An id, a template code or words of the description; @alias for the transactions "
        "with an operation on that account; key=value for a metadata entry."
    )
    csv_columns = (
        ("id", lambda tx: tx.pk),
        ("created_at", lambda tx: tx.created_at.isoformat()),
        ("effective_at", lambda tx: tx.effective_at.isoformat()),
        ("type", lambda tx: tx.type),
        ("status", lambda tx: tx.status),
        ("amount", lambda tx: format_amount(tx.amount, tx.scale)),
        ("asset_code", lambda tx: tx.asset_code),
        ("source", lambda tx: " ".join(tx.source)),
        ("destination", lambda tx: " ".join(tx.destination)),
        ("parent_id", lambda tx: tx.parent_id or ""),
        ("description", lambda tx: tx.description or ""),
        ("metadata", lambda tx: json.dumps(tx.metadata or {}, sort_keys=True)),
        ("ledger_id", lambda tx: tx.ledger_id),
    )
    list_select_related = ("ledger",)
    ordering = ("-created_at", "-id")
    inlines = (OperationInline,)
    actions = (
        "commit_transactions",
        "revert_transactions",
        "cancel_transactions",
        "expire_transactions",
    )
    fields = (
        "id",
        "status",
        "type_link",
        "amount_text",
        "conversion_text",
        "description",
        "source_text",
        "destination_text",
        "parent_link",
        "reversal_link",
        "ledger_link",
        "chart_of_accounts_group_name",
        "metadata",
        "effective_at",
        "created_at",
        "updated_at",
    )
    readonly_fields = fields

    def has_operate_permission(self, request: HttpRequest) -> bool:
        """Commit, revert and cancel write: they need the change permission on transactions."""
        opts = self.opts
        return request.user.has_perm(f"{opts.app_label}.change_{opts.model_name}")

    @admin.display(description="id", ordering="id")
    def full_id(self, tx: Transaction) -> SafeString:
        return full_id(tx.pk)

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[Transaction], search_term: str
    ) -> tuple[QuerySet[Transaction], bool]:
        """``@alias``: the transactions with an operation on that account (one indexed
        EXISTS); ``key=value``: a metadata entry, compared as text as in the API's filters;
        anything else: the id, template code or description."""
        term = search_term.strip()
        if term.startswith("@") and " " not in term:
            on_account = Operation.objects.filter(
                organization_id=OuterRef("organization_id"),  # Citus: one node per tenant
                transaction_id=OuterRef("pk"),
                account_alias=term,
            )
            return queryset.filter(Exists(on_account)), False
        key, sep, value = term.partition("=")
        if sep and key.strip() and " " not in key.strip():
            return filter_by_metadata(queryset, [(key.strip(), value.strip())]), False
        return super().get_search_results(request, queryset, search_term)

    @admin.display(description="amount")
    def amount_text(self, tx: Transaction) -> str:
        return format_amount(tx.amount, tx.scale, tx.asset_code)

    @admin.display(description="converted")
    def conversion_text(self, tx: Transaction) -> str:
        """What a conversion delivered, at which stored rate (docs/CONVERSIONS.md)."""
        if not tx.conversion:
            return "-"
        rate, sent, delivered = (tx.conversion[k] for k in ("rate", "sent", "delivered"))
        stored = format_amount(rate["amount"], rate["scale"])
        inverted = ", applied inverted" if rate["direction"] == "INVERSE" else ""
        source = f" from {rate['source']}" if rate["source"] else ""
        return (
            f"{format_amount(sent['amount'], sent['scale'], sent['assetCode'])} to "
            f"{format_amount(delivered['amount'], delivered['scale'], delivered['assetCode'])} "
            f"at {rate['baseAssetCode']}/{rate['counterAssetCode']} {stored}{source}"
            f"{inverted} (rate {rate['id']}, set {rate['validFrom']})"
        )

    @admin.display(description="from")
    def source_text(self, tx: Transaction) -> str:
        return ", ".join(tx.source)

    @admin.display(description="to")
    def destination_text(self, tx: Transaction) -> str:
        return ", ".join(tx.destination)

    @admin.display(description="parent")
    def parent_link(self, tx: Transaction) -> SafeString | str:
        return admin_link(Transaction, tx.parent_id, tx.parent_id)

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

    def get_urls(self) -> list[Any]:
        def act(request: HttpRequest, object_id: str, verb: str) -> Any:
            return admin_actions.confirm(request, object_id, verb, model_admin=self)

        name = f"{self.opts.app_label}_{self.opts.model_name}_act"
        page = path("<path:object_id>/act/<str:verb>/", self.admin_site.admin_view(act), name=name)
        return [page, *super().get_urls()]

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: Any = None
    ) -> Any:
        found = Transaction.objects.filter(pk=object_id).only(
            "organization_id", "type", "status", "expires_at"
        )
        tx = found.first()
        extra = {
            "can_operate": self.has_operate_permission(request),
            "expired": tx is not None and is_expired(tx, timezone.now()),
            "reverted": tx is not None
            and Transaction.objects.filter(
                organization_id=tx.organization_id, parent_id=tx.pk, is_reversal=True
            ).exists(),
            **({"subtitle": f"{tx.type} {tx.pk} ({tx.status})"} if tx else {}),
            **(extra_context or {}),
        }
        return super().change_view(request, object_id, form_url, extra_context=extra)

    @admin.action(description="Commit the selected pending transactions", permissions=["operate"])
    def commit_transactions(self, request: HttpRequest, queryset: QuerySet[Transaction]) -> Any:
        return admin_actions.confirm_selected(self, request, queryset, "commit")

    @admin.action(description="Revert the selected transactions", permissions=["operate"])
    def revert_transactions(self, request: HttpRequest, queryset: QuerySet[Transaction]) -> Any:
        return admin_actions.confirm_selected(self, request, queryset, "revert")

    @admin.action(description="Cancel the selected pending transactions", permissions=["operate"])
    def cancel_transactions(self, request: HttpRequest, queryset: QuerySet[Transaction]) -> Any:
        return admin_actions.confirm_selected(self, request, queryset, "cancel")

    @admin.action(
        description="Expire the selected holds past their expiry", permissions=["operate"]
    )
    def expire_transactions(self, request: HttpRequest, queryset: QuerySet[Transaction]) -> Any:
        return admin_actions.confirm_selected(self, request, queryset, "expire")


class LedgerBackOfficeAdmin(LedgerAdmin):
    """The ledger's admin with the pages of this app: its dashboard and its posting page
    (``organizations.admin`` links them by URL name and knows nothing of them). Reopening a
    closed period that a rule of the ledger sends to a second person is proposed instead."""

    def update_for(self, request: HttpRequest) -> Any:
        return _proposing(
            self, super().update_for(request), ApprovalRule.REOPEN, approvals.reopen_needs_approval
        )

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
                view(admin_posting.ledger_post),
                name="{}_{}_post".format(*info),
            ),
            path(
                "<path:object_id>/reports/",
                view(admin_reports.ledger_reports),
                name="{}_{}_reports".format(*info),
            ),
            path(
                "<path:object_id>/journal/",
                view(admin_reports.ledger_journal),
                name="{}_{}_journal".format(*info),
            ),
            path(
                "<path:object_id>/chart-of-accounts/",
                view(admin_trees.chart_of_accounts),
                name="{}_{}_chart_of_accounts".format(*info),
            ),
            *super().get_urls(),
        ]


admin.site.unregister(Ledger)
admin.site.register(Ledger, LedgerBackOfficeAdmin)


def _proposing(model_admin: Any, write: Any, action: str, needs: Any) -> Any:
    """``write`` (a change form's writer), unless ``needs(obj, data)`` says the change needs a
    second person: then it is proposed for approval instead (``approvals.propose_change``),
    with what each field's change would do as its summary."""

    def proposing(obj: Any, data: dict[str, Any]) -> Any:
        if not needs(obj, data):
            return write(obj, data)
        summary = "; ".join(
            model_admin.explain_change(obj, name, getattr(obj, name, None), value)
            for name, value in data.items()
        )
        ledger = obj if isinstance(obj, Ledger) else obj.ledger
        reason = actors.current().reason or ""
        approval = approvals.propose_change(
            ledger, action, obj, data, summary=summary, reason=reason
        )
        raise Proposed(admin_url(Approval, "change", approval.pk))

    return proposing


class AccountBackOfficeAdmin(AccountAdmin):
    """The account's admin with its page (``admin_account``): balance, history, latest
    transactions, statement; and freeze and unfreeze from it. A change of its overdraft limit
    that a rule of the ledger sends to a second person is proposed instead."""

    def update_for(self, request: HttpRequest) -> Any:
        def needs(account: Account, data: dict[str, Any]) -> bool:
            return approvals.limit_needs_approval(account, data.get("overdraft_limit"))

        return _proposing(self, super().update_for(request), ApprovalRule.LIMIT, needs)

    def get_urls(self) -> list[Any]:
        def page(request: HttpRequest, object_id: str) -> Any:
            return admin_account.account_page(request, object_id, model_admin=self)

        def status(request: HttpRequest, object_id: str, code: str) -> Any:
            return admin_account.account_status(request, object_id, code, model_admin=self)

        info = self.opts.app_label, self.opts.model_name
        return [
            path(
                "<path:object_id>/page/",
                self.admin_site.admin_view(page),
                name="{}_{}_page".format(*info),
            ),
            path(
                "<path:object_id>/status/<str:code>/",
                self.admin_site.admin_view(status),
                name="{}_{}_status".format(*info),
            ),
            *super().get_urls(),
        ]


admin.site.unregister(Account)
admin.site.register(Account, AccountBackOfficeAdmin)
