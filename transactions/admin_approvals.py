"""Maker-checker in the back office (``transactions.approvals``): each ledger's rules, the list
of proposals (pending first), and a proposal's page, from which a member of staff who may
decide, and is not its maker, approves or rejects it with a reason
(``.../approval/<id>/decide/<approve|reject>/``)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Case, IntegerField, QuerySet, Value, When
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path
from django.utils.html import format_html
from django.utils.safestring import SafeString

from ledgerproject import actors
from ledgerproject.admin_base import LedgerModelAdmin
from ledgerproject.errors import LedgerError
from organizations.admin import ReasonForm, admin_link, admin_url, scope_filter
from organizations.models import Ledger
from outbox import events
from transactions import approvals
from transactions.admin_records import ReadOnlyAdmin
from transactions.models import Approval, ApprovalRule, Transaction

DECISIONS = {"approve": "Approve", "reject": "Reject"}


@admin.register(ApprovalRule)
class ApprovalRuleAdmin(LedgerModelAdmin):
    list_title = "Approval rules"
    list_display = ("ledger", "action", "asset_code", "above", "above_scale", "created_at")
    list_filter = (scope_filter("ledger", Ledger), "action")
    list_select_related = ("ledger",)
    autocomplete_fields = ("ledger",)
    fields = ("ledger", "action", "asset_code", "above", "above_scale")

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return ("ledger",) if obj else ()

    def save_model(self, request: HttpRequest, obj: ApprovalRule, form: Any, change: bool) -> None:
        """Saved with its event (``approval_rule.created`` or ``.updated``): who loosened or
        tightened a ledger's rules, and when, is in the audit trail."""
        if not change:
            obj.organization_id = obj.ledger.organization_id
        with transaction.atomic():
            super().save_model(request, obj, form, change)
            events.record(obj, "updated" if change else "created")

    def delete_model(self, request: HttpRequest, obj: ApprovalRule) -> None:
        with transaction.atomic():
            events.record(obj, "deleted")
            super().delete_model(request, obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[ApprovalRule]) -> None:
        with transaction.atomic():
            for rule in queryset:
                self.delete_model(request, rule)


@admin.register(Approval)
class ApprovalAdmin(ReadOnlyAdmin):
    list_title = "Approvals"
    list_display = ("created_at", "status", "action", "summary", "maker_name", "checker_name",
                    "result", "ledger")  # fmt: skip
    list_filter = (scope_filter("ledger", Ledger), "status", "action")
    search_fields = ("=id", "summary", "maker_name", "checker_name")
    list_select_related = ("ledger",)
    fields = (
        "status", "action", "summary", "ledger_link", "maker_name", "maker_reason", "created_at",
        "checker_name", "checker_reason", "decided_at", "result", "request",
    )  # fmt: skip
    readonly_fields = fields

    def get_ordering(self, request: HttpRequest) -> Any:
        """Pending first, then the decided; newest first within each."""
        pending = Case(When(status=Approval.PENDING, then=Value(0)), default=Value(1),
                       output_field=IntegerField())  # fmt: skip
        return [pending.asc(), "-created_at", "-id"]

    @admin.display(description="ledger")
    def ledger_link(self, approval: Approval) -> SafeString | str:
        return admin_link(Ledger, approval.ledger_id, approval.ledger.name)

    @admin.display(description="result")
    def result(self, approval: Approval) -> SafeString | str:
        if approval.transaction_id is not None:
            return admin_link(Transaction, approval.transaction_id, str(approval.transaction_id))
        if approval.error:
            return f"refused: {approval.error['code']} {approval.error['description']}"
        return "—"

    def may_decide(self, request: HttpRequest) -> bool:
        return request.user.has_perm("transactions.decide_approval")

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: Any = None
    ) -> Any:
        approval = self.get_object(request, unquote(object_id))
        mine = approval is not None and approval.maker_id == actors.current().actor.id
        extra = {"may_decide": self.may_decide(request) and not mine, **(extra_context or {})}
        return super().change_view(request, object_id, form_url, extra_context=extra)

    def get_urls(self) -> list[Any]:
        def decide(request: HttpRequest, object_id: str, decision: str) -> Any:
            return self.decide(request, object_id, decision)

        name = f"{self.opts.app_label}_{self.opts.model_name}_decide"
        page = path(
            "<path:object_id>/decide/<str:decision>/", self.admin_site.admin_view(decide), name=name
        )
        return [page, *super().get_urls()]

    def decide(self, request: HttpRequest, object_id: str, decision: str) -> HttpResponse:
        if decision not in DECISIONS:
            raise Http404("No such decision.")
        if not self.may_decide(request):
            raise PermissionDenied
        approval = self.get_object(request, unquote(object_id))
        if approval is None:
            raise Http404("No such approval.")
        page = admin_url(Approval, "change", approval.pk)
        form = ReasonForm(request.POST if request.method == "POST" else None)
        if approval.status == Approval.PENDING and form.is_valid():
            reason = form.cleaned_data["reason"]
            try:
                if decision == "approve":
                    done = approvals.approve(approval, reason=reason)
                else:
                    done = approvals.reject(approval, reason=reason)
            except LedgerError as exc:
                form.add_error(None, f"{exc.error.code}: {exc.description}")
            else:
                self._tell(request, done)
                return HttpResponseRedirect(page)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "original": approval,
            "title": f"{DECISIONS[decision]} this {approval.action}?",
            "decision": decision,
            "label": DECISIONS[decision],
            "form": form,
            "back": page,
        }
        return TemplateResponse(request, "admin/transactions/approval/decide.html", context)

    def _tell(self, request: HttpRequest, approval: Approval) -> None:
        if approval.checker_id != actors.current().actor.id:
            self.message_user(request, "Someone else decided it first.", messages.WARNING)
        elif approval.status == Approval.DONE:
            link = admin_link(Transaction, approval.transaction_id, str(approval.transaction_id))
            self.message_user(request, format_html("Approved and done: {}.", link))
        elif approval.status == Approval.FAILED:
            error = approval.error or {}
            self.message_user(
                request,
                f"Approved, but refused now: {error.get('code')} {error.get('description')}",
                messages.ERROR,
            )
        else:
            self.message_user(request, "Rejected: nothing moved.")
