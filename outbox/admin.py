"""Staff admin for the event log, webhook subscriptions and their deliveries.

Events are read-only. Subscriptions are created and changed through ``outbox.webhooks`` (the
API's services): the URL rule refuses here what the API refuses, with the same code, and a new
subscription's secret is shown once, in the message after saving. Deliveries show their
attempts (status, answer, error, duration); staff retry failed ones with an action."""

from __future__ import annotations

import uuid
from typing import Any

from django import forms
from django.apps import apps
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from ledgerproject.admin_base import LedgerModelAdmin
from ledgerproject.admin_csv import CsvExportMixin
from ledgerproject.errors import LedgerError
from outbox import webhooks
from outbox.events import CATALOGUE
from outbox.models import Delivery, DeliveryAttempt, Event, WebhookSubscription


@admin.register(Event)
class EventAdmin(CsvExportMixin, LedgerModelAdmin):
    """The audit trail: every change, who made it (actor), in which request, from where. A
    ledger's own is this list with ``?ledger_id=<id>`` (linked from the ledger's dashboard)."""

    list_title = "Audit trail"
    list_display = ("created_at", "type", "actor_kind", "actor_name", "request_id",
                    "client_address", "resource_id", "ledger_id")  # fmt: skip
    list_filter = ("type", "actor_kind", "created_at")
    search_fields = ("=event_id", "=resource_id", "=organization_id", "=ledger_id",
                     "actor_name", "=actor_id", "=request_id")  # fmt: skip
    search_help_text = (
        "An event, resource, organization or ledger id; a request id; an actor's name or id."
    )
    ordering = ("-seq",)
    csv_columns = (
        ("created_at", lambda e: e.created_at.isoformat()),
        ("type", lambda e: e.type),
        ("actor_kind", lambda e: e.actor_kind),
        ("actor_name", lambda e: e.actor_name),
        ("actor_id", lambda e: e.actor_id or ""),
        ("request_id", lambda e: e.request_id),
        ("client_address", lambda e: e.client_address or ""),
        ("resource_id", lambda e: e.resource_id),
        ("ledger_id", lambda e: e.ledger_id or ""),
        ("event_id", lambda e: e.event_id),
    )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


# The most organizations (and ledgers) the subscription form offers to choose from.
MAX_CHOICES = 500


class SubscriptionForm(forms.ModelForm):
    """A new subscription's organization and ledger are chosen from lists (the models are
    found by label: the event outbox comes before the apps that own them)."""

    event_types = forms.MultipleChoiceField(choices=[(t, t) for t in ("*", *CATALOGUE)])

    class Meta:
        model = WebhookSubscription
        fields = ("organization_id", "ledger_id", "url", "event_types", "status", "description")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if "organization_id" not in self.fields:  # a change: where it points stays
            return
        organizations = apps.get_model("organizations", "Organization").objects.filter(
            deleted_at__isnull=True
        )
        ledgers = apps.get_model("organizations", "Ledger").objects.filter(deleted_at__isnull=True)
        self.fields["organization_id"] = forms.TypedChoiceField(
            label="Organization",
            coerce=uuid.UUID,
            choices=[
                (str(o.pk), o.legal_name)
                for o in organizations.order_by("legal_name", "id")[:MAX_CHOICES]
            ],
        )
        self.fields["ledger_id"] = forms.TypedChoiceField(
            label="Ledger",
            coerce=uuid.UUID,
            required=False,
            empty_value=None,
            help_text="Empty: the events of the whole organization.",
            choices=[("", "(every ledger of the organization)")]
            + [
                (str(ledger.pk), f"{ledger.organization.legal_name} / {ledger.name}")
                for ledger in ledgers.select_related("organization").order_by(
                    "organization__legal_name", "name", "id"
                )[:MAX_CHOICES]
            ],
        )

    def clean_url(self) -> str:
        """The API's rules, with its codes: the URL's form, then where it leads."""
        try:
            return webhooks.check_destination(webhooks.check_url(self.cleaned_data["url"]))
        except LedgerError as exc:
            raise forms.ValidationError(f"{exc.error.code}: {exc.description}") from None

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        ledger, organization = data.get("ledger_id"), data.get("organization_id")
        ledgers = apps.get_model("organizations", "Ledger").objects
        if ledger is not None and (
            organization is None
            or not ledgers.filter(
                pk=ledger, organization_id=organization, deleted_at__isnull=True
            ).exists()
        ):
            raise forms.ValidationError("The ledger is not one of the organization's.")
        if self.instance.created_at is None and data.get("organization_id"):  # a new one
            try:
                webhooks.check_room(data["organization_id"])
            except LedgerError as exc:
                raise forms.ValidationError(f"{exc.error.code}: {exc.description}") from None
        return data


# The most subscriptions one test send reaches: each waits up to the delivery time limit.
MAX_TESTS = 5


@admin.register(WebhookSubscription)
class WebhookSubscriptionAdmin(LedgerModelAdmin):
    form = SubscriptionForm
    list_display = ("url", "status", "organization_id", "ledger_id", "consecutive_failures",
                    "last_error_at", "suspended_until", "created_at", "deleted_at")  # fmt: skip
    list_filter = ("status",)
    search_fields = ("url", "=id", "=organization_id")
    actions = ("pause", "resume", "send_test")
    HEALTH = ("consecutive_failures", "last_error", "last_error_at", "suspended_until")

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return ("organization_id", "ledger_id", "deleted_at", *self.HEALTH) if obj else ()

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        fields = list(super().get_fields(request, obj))
        return fields if obj else [f for f in fields if f not in self.HEALTH]

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        data = {k: v for k, v in form.cleaned_data.items() if k in form.changed_data or not change}
        if change:
            data = {k: v for k, v in data.items() if k not in {"organization_id", "ledger_id"}}
            webhooks.subscription_update(subscription=obj, data=data)
            return
        created = webhooks.subscription_create(**data)
        obj.pk = created.pk
        self.message_user(
            request,
            f"The subscription's secret, shown this once: {created.secret}",
            messages.WARNING,
        )

    def _set_status(self, queryset: QuerySet[WebhookSubscription], status: str) -> None:
        for subscription in queryset:
            webhooks.subscription_update(subscription=subscription, data={"status": status})

    @admin.action(description="Pause the selected subscriptions", permissions=["change"])
    def pause(self, request: HttpRequest, queryset: QuerySet[WebhookSubscription]) -> None:
        self._set_status(queryset, WebhookSubscription.PAUSED)

    @admin.action(description="Resume the selected subscriptions", permissions=["change"])
    def resume(self, request: HttpRequest, queryset: QuerySet[WebhookSubscription]) -> None:
        self._set_status(queryset, WebhookSubscription.ACTIVE)

    @admin.action(
        description="Send a test event to the selected subscriptions", permissions=["change"]
    )
    def send_test(self, request: HttpRequest, queryset: QuerySet[WebhookSubscription]) -> None:
        """A signed ``webhook.test`` to each (at most ``MAX_TESTS``), one after the other, each
        within the delivery time limit; a message per subscription says what came back."""
        chosen = list(queryset.order_by("created_at", "id")[: MAX_TESTS + 1])
        if len(chosen) > MAX_TESTS:
            self.message_user(
                request, f"Select at most {MAX_TESTS} subscriptions to test.", messages.ERROR
            )
            return
        for subscription in chosen:
            answer = webhooks.send_test(subscription)
            if answer.ok:
                text, level = f"answered {answer.status_code}", messages.SUCCESS
            elif answer.status_code is not None:
                text, level = f"answered {answer.status_code}: {answer.body[:200]}", messages.ERROR
            else:
                text, level = answer.error or "no answer", messages.ERROR
            self.message_user(
                request, f"{subscription.url}: {text} ({answer.duration_ms} ms).", level
            )


class AttemptInline(admin.TabularInline):
    model = DeliveryAttempt
    fields = ("number", "started_at", "duration_ms", "status_code", "response_body", "error")
    readonly_fields = fields
    extra = 0
    can_delete = False
    ordering = ("started_at",)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Delivery)
class DeliveryAdmin(LedgerModelAdmin):
    list_title = "Webhook deliveries"
    list_display = ("id", "event", "subscription", "status", "attempts", "next_attempt_at")
    list_filter = ("status",)
    list_select_related = ("event", "subscription")
    search_fields = ("=id", "=event__event_id", "subscription__url")
    readonly_fields = ("subscription", "event", "status", "attempts", "next_attempt_at",
                       "created_at", "updated_at")  # fmt: skip
    inlines = (AttemptInline,)
    actions = ("retry",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.action(description="Retry the selected deliveries now", permissions=["change"])
    def retry(self, request: HttpRequest, queryset: QuerySet[Delivery]) -> None:
        count = webhooks.delivery_retry(delivery_ids=list(queryset.values_list("pk", flat=True)))
        self.message_user(request, f"{count} deliveries will be sent again.", messages.SUCCESS)
