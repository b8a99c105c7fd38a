"""Staff admin for scheduled postings: the list (by status, ledger and moment), each one's
request and outcome, and the one write, canceling those still ``SCHEDULED`` through the same
service as the API (``scheduling.cancel``), which needs the change permission on scheduled
postings. They are scheduled from the ledger's posting page (``admin_posting.ledger_post``)."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html
from django.utils.safestring import SafeString

from ledgerproject.errors import LedgerError
from organizations.admin import admin_link, scope_filter
from organizations.models import Ledger
from transactions import scheduling
from transactions.admin_records import ReadOnlyAdmin, full_id
from transactions.models import ScheduledPosting, Transaction


@admin.register(ScheduledPosting)
class ScheduledPostingAdmin(ReadOnlyAdmin):
    list_display = (
        "full_id",
        "scheduled_for",
        "status",
        "posts_with",
        "outcome",
        "ledger",
        "created_at",
    )
    list_filter = (scope_filter("ledger", Ledger), "status", "scheduled_for")
    search_fields = ("=id", "template_code", "description")
    list_select_related = ("ledger",)
    ordering = ("scheduled_for", "id")
    actions = ("cancel_scheduled",)
    fields = (
        "id",
        "status",
        "scheduled_for",
        "posts_with",
        "variables_text",
        "description",
        "pending",
        "expires_at",
        "commit_at",
        "metadata",
        "outcome",
        "ledger",
        "actor_text",
        "created_at",
        "updated_at",
    )
    readonly_fields = fields

    def has_operate_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("transactions.change_scheduledposting")

    @admin.display(description="id", ordering="id")
    def full_id(self, row: ScheduledPosting) -> SafeString:
        return full_id(row.pk)

    @admin.display(description="posts with")
    def posts_with(self, row: ScheduledPosting) -> SafeString | str:
        if row.template_code:
            return row.template_code
        return format_html("<pre>{}</pre>", row.dsl)

    @admin.display(description="variables")
    def variables_text(self, row: ScheduledPosting) -> str:
        return json.dumps(row.variables, sort_keys=True)

    @admin.display(description="outcome")
    def outcome(self, row: ScheduledPosting) -> SafeString | str:
        if row.transaction_id is not None:
            return admin_link(Transaction, row.transaction_id, row.transaction_id)
        if row.error:
            return f"{row.error.get('code')}: {row.error.get('description')}"
        return "-"

    @admin.display(description="scheduled by")
    def actor_text(self, row: ScheduledPosting) -> str:
        return f"{row.actor_kind} {row.actor_name}" + (f" ({row.actor_id})" if row.actor_id else "")

    @admin.action(description="Cancel the selected scheduled postings", permissions=["operate"])
    def cancel_scheduled(self, request: HttpRequest, queryset: QuerySet[ScheduledPosting]) -> Any:
        for row in queryset.select_related("ledger").order_by("scheduled_for", "id"):
            try:
                scheduling.cancel(row.ledger, row.pk)
            except LedgerError as exc:
                messages.error(
                    request, f"{row.pk!s}: cancel refused — {exc.error.code} {exc.description}"
                )
            else:
                messages.success(request, f"{row.pk!s}: canceled; it will not be posted.")
        return None
