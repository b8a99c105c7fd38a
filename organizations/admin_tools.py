"""What every resource's admin shares: links between admin pages, the sidebar filters, and
``ResourceAdmin``, which creates, changes and deactivates through the resource's services so
that the admin refuses what the API refuses, with the same code and message on the form."""

from __future__ import annotations

import contextlib
import hashlib
import re
import uuid
from collections.abc import Iterable
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.utils import flatten_fieldsets
from django.db.models import Model, QuerySet
from django.http import HttpRequest, HttpResponseRedirect
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from ledgerproject import actors
from ledgerproject.admin_base import LedgerModelAdmin
from ledgerproject.db import field_of
from ledgerproject.errors import LedgerError

RESOURCE_READONLY = ("id", "created_at", "updated_at", "deleted_at")
# The fields of a change form with reason fields that are not the model's (``service_form``).
FORM_ONLY = ("reason", "confirm")


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
    """Browse, create and edit through the services: an add or a change is written by the
    resource's create or update service while the form validates (inside the admin's
    transaction), so the admin refuses exactly what the API refuses and shows the same code and
    message on the form; deactivation (soft delete) goes through the delete service, each
    refusal shown as a message."""

    list_per_page = 50
    show_full_result_count = False
    actions = ("deactivate",)

    def update_one(self, obj: Any, data: dict[str, Any]) -> Any:
        """Write ``data`` (model field names) to ``obj`` through the resource's service."""
        raise NotImplementedError

    def update_for(self, request: HttpRequest) -> Any:
        """What writes a change made by ``request``'s user: ``update_one``, unless what the
        service allows depends on the user's permissions."""
        return self.update_one

    # The fields whose change stops money or lets it move (an account's status, a ledger's
    # closed period): a change of any of them asks for a reason, kept with the staff user on
    # the event the change writes (``actors.reason``).
    reason_fields: tuple[str, ...] = ()

    def explain_change(self, obj: Any, name: str, old: Any, new: Any) -> str:
        """What changing ``name`` of ``obj`` from ``old`` to ``new`` will do, in a sentence,
        for the confirmation a change of a reason field asks for first."""
        return f"{name.replace('_', ' ')}: {_shown(old)} → {_shown(new)}"

    # The fields of the add form; empty: this admin adds nothing (created through the API).
    add_fields: tuple[str, ...] = ()
    # Those of them the service requires; the others may be left empty.
    add_required: tuple[str, ...] = ()

    def create_one(self, data: dict[str, Any]) -> Any:
        """Create the object from the add form's cleaned data through the resource's service."""
        raise NotImplementedError

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None:
            return self.add_fields
        fields = list(super().get_fields(request, obj))
        # An admin that lists its fields does not list the form's own ``reason`` and ``confirm``.
        if not self.reason_fields or "reason" in fields:
            return fields
        return [*fields, "reason", "confirm"]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return () if obj is None else super().get_readonly_fields(request, obj)

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any):
        if obj is None:
            kwargs["fields"] = self.add_fields
        else:  # the form's own ``reason`` and ``confirm`` are no fields of the model
            named = (
                kwargs["fields"]
                if "fields" in kwargs
                else flatten_fieldsets(self.get_fieldsets(request, obj))
            )
            if named is not None:
                kwargs["fields"] = [name for name in named if name not in FORM_ONLY]
        base = super().get_form(request, obj, change=change, **kwargs)
        if change:
            return service_form(
                base,
                self.update_for(request),
                reason_for=self.reason_fields,
                explain=self.explain_change,
            )
        return service_form(base, self.create_one, create=True, required=self.add_required)

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        """Nothing: the service wrote the object (or the change) when the form validated."""

    def construct_change_message(
        self, request: HttpRequest, form: Any, formsets: Any, add: bool = False
    ) -> Any:
        if getattr(form.instance, "proposal_url", None):
            return "Proposed for approval; nothing changed."
        return super().construct_change_message(request, form, formsets, add)

    def response_change(self, request: HttpRequest, obj: Any) -> Any:
        """A change proposed for approval (``Proposed``) goes to its proposal's page."""
        url = getattr(obj, "proposal_url", None)
        if url is None:
            return super().response_change(request, obj)
        self.message_user(
            request,
            format_html(
                'This change needs a second person: <a href="{}">proposed for approval</a>; '
                "nothing changed yet.",
                url,
            ),
            messages.WARNING,
        )
        return HttpResponseRedirect(url)

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        """Nothing: the service wrote everything the form holds."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return bool(self.add_fields) and super().has_add_permission(request)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def deactivate_one(self, obj: Any) -> None:
        raise NotImplementedError

    @admin.action(
        description="Deactivate (soft-delete) the selected %(verbose_name_plural)s",
        permissions=["deactivate"],
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


def service_form(
    base: type[forms.ModelForm],
    write: Any,
    *,
    create: bool = False,
    required: tuple[str, ...] = (),
    reason_for: tuple[str, ...] = (),
    explain: Any = None,
) -> type[forms.ModelForm]:
    """``base`` whose validation ends by writing through ``write``: on a change, the changed
    fields (``write(current, data)``); on an add, the cleaned data (``write(data)``), the
    object the service created becoming the form's instance. A refusal becomes the form's
    error, on the field it names when the form has it. With ``reason_for``, the form has a
    ``reason``, needed when one of those fields changes and kept on the change's event, and
    such a change is saved only once confirmed: the first save shows what it will do
    (``explain(current, name, old, new)`` per field) and keeps a digest of that in the hidden
    ``confirm``; a second save of the same change, from the same state, writes it."""

    class ServiceForm(base):  # type: ignore[valid-type,misc]
        instance: Any
        data: Any

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            if create:
                for name, field in self.fields.items():
                    # Left empty, an optional field takes the service's default.
                    field.required = name in required

        def full_clean(self) -> None:
            # The form's fields, its clean() and the model's validation of what the form holds
            # (fields it does not show are left to the service); then the service writes.
            super().full_clean()
            if not self.is_bound or self.errors:
                return
            if create:
                self._write(lambda: write(dict(self.cleaned_data)))
                return
            changed = [name for name in self.changed_data if name not in FORM_ONLY]
            if not changed:
                return
            reason = self.cleaned_data.get("reason") or ""
            if not reason and set(changed) & set(reason_for):
                names = ", ".join(
                    str(self.fields[n].label or n).lower() for n in changed if n in reason_for
                )
                self.add_error("reason", f"Say why {names} changes: it is kept with your name.")
                return
            model = self._meta.model
            current: Any = model._default_manager.get(pk=self.instance.pk)
            if not self._confirmed(current, [n for n in changed if n in reason_for]):
                return
            own = {f.name for f in model._meta.concrete_fields}
            # A form field that is not the model's (the account's overdraft limit) is passed to
            # the service under its own name.
            data = {
                (field_of(model, name).attname if name in own else name): self.cleaned_data[name]
                for name in changed
            }
            with actors.reason(reason) if reason else contextlib.nullcontext():
                self._write(lambda: write(current, data))

        def _confirmed(self, current: Any, names: list[str]) -> bool:
            """Whether this change of reason fields was shown and confirmed (none: nothing to
            confirm); if not, the form says what it will do and asks to save again."""
            if not names or explain is None:
                return True
            lines = [
                explain(current, name, self.initial.get(name), self.cleaned_data[name])
                for name in names
            ]
            digest = hashlib.sha256("\n".join(lines).encode()).hexdigest()[:32]
            if self.cleaned_data.get("confirm") == digest:
                return True
            shown: Any = self.data.copy()  # the page carries the digest to the second save
            shown["confirm"] = digest
            self.data = shown
            self.add_error(None, "This change will do the following; save again to confirm it.")
            for line in lines:
                self.add_error(None, line)
            return False

        def _write(self, call: Any) -> None:
            try:
                self.instance = call()
            except Proposed as proposed:
                # Nothing was written: the change waits for another's approval.
                self.instance.proposal_url = proposed.url
            except LedgerError as exc:
                self.add_error(_field_of(self, exc), f"{exc.error.code}: {exc.description}")

    if reason_for:
        needed = "Needed when " + ", ".join(reason_for).replace("_", " ") + " changes."
        reason = reason_field(needed, required=False)
        confirm = forms.CharField(required=False, widget=forms.HiddenInput)
        fields = {"reason": reason, "confirm": confirm}
        return type("ReasonedServiceForm", (ServiceForm,), fields)
    return ServiceForm


class Proposed(Exception):
    """A writer's answer that it made no change but proposed it for another member of staff to
    approve (``transactions.approvals``); ``url`` is the proposal's page."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.url = url


def reason_field(when: str = "", *, required: bool = True) -> forms.CharField:
    """The reason staff give for a change (``actors.reason``): at most ``MAX_REASON``
    characters; ``when`` says when it is needed, if not always."""
    return forms.CharField(
        required=required,
        max_length=actors.MAX_REASON,
        strip=True,
        widget=forms.Textarea(attrs={"rows": 2, "cols": 70}),
        help_text=f"{when or 'Why.'} Kept with your user name on the events the change writes, "
        "which API clients and webhooks receive and the journal seals: it cannot be taken back.",
    )


class ReasonForm(forms.Form):
    reason = reason_field()


class ReasonToAct:
    """For a form with an optional ``reason`` field that previews as well as acts: the reason
    is needed only when it acts (``acting``)."""

    acting: bool
    cleaned_data: dict[str, Any]

    def clean_reason(self) -> str:
        reason = self.cleaned_data.get("reason") or ""
        if self.acting and not reason:
            raise forms.ValidationError("This field is required: say why.")
        return str(reason)


def filled_in(data: dict[str, Any]) -> dict[str, Any]:
    """The add form's values that were filled in (an empty field takes the service's default,
    as an absent field of an API body does)."""
    return {name: value for name, value in data.items() if value not in ("", None)}


def _shown(value: Any) -> str:
    return "(none)" if value is None or value == "" else str(value)


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
