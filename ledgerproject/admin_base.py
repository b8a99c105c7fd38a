"""The base of every ModelAdmin in the back office.

Two rules live here so that no admin can forget them: every action declares the permission it
needs (an action without one is open to a view-only user; a test walks the registry), and a
selection holding an id that is not valid is refused with a message instead of crashing the
action. So does each list's title, in the back office's words (``list_title``)."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

from django.apps import apps
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.core.exceptions import FieldDoesNotExist, ValidationError
from django.db import models
from django.http import HttpRequest, HttpResponseRedirect
from django.utils.text import capfirst

from ledgerproject.admin_widgets import AddressField, MetadataWidget


class LedgerModelAdmin(admin.ModelAdmin):
    # The list's name in the back office's words, on its page and in the index (the model's
    # plural name when None): "Audit trail", not "Events", nor Django's "Select event to
    # change".
    list_title: str | None = None

    def formfield_for_dbfield(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        """Metadata is edited as rows of keys and values, an address as its parts
        (``admin_widgets``), not as JSON."""
        if db_field.name == "metadata":
            kwargs["widget"] = MetadataWidget
        if db_field.name == "address":
            kwargs["form_class"] = AddressField
        return super().formfield_for_dbfield(db_field, request, **kwargs)

    def has_deactivate_permission(self, request: HttpRequest) -> bool:
        """Deactivating (a soft delete, the only delete the back office has) needs the model's
        *delete* permission: changing a row is not removing it."""
        return request.user.has_perm(f"{self.opts.app_label}.delete_{self.opts.model_name}")

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        """An add form opened from a list narrowed to a parent (``?ledger=<id>``) starts with
        that parent chosen."""
        initial = super().get_changeform_initial_data(request)
        kept = dict(parse_qsl(request.GET.get("_changelist_filters", "")))
        for name in self.get_fields(request):
            if name in kept and name not in initial and self._fits(name, kept[name]):
                initial[name] = kept[name]
        return initial

    def _fits(self, name: str, value: str) -> bool:
        """Whether ``value`` is one the model's field ``name`` can hold (a malformed id from
        the address bar is left out rather than shown)."""
        try:
            field = self.opts.get_field(name)
        except FieldDoesNotExist:
            return False
        if not isinstance(field, models.Field):
            return False
        try:
            field.to_python(value)
        except ValidationError:
            return False
        return True

    def title_of_list(self) -> str:
        return self.list_title or capfirst(str(self.opts.verbose_name_plural))

    def changelist_view(self, request: HttpRequest, extra_context: Any = None) -> Any:
        return super().changelist_view(
            request, {"title": self.title_of_list(), **(extra_context or {})}
        )

    def response_action(self, request: HttpRequest, queryset: Any, *args: Any, **kw: Any) -> Any:
        pk = self.model._meta.pk
        assert pk is not None
        try:
            for value in request.POST.getlist(helpers.ACTION_CHECKBOX_NAME):
                pk.to_python(value)
        except ValidationError:
            self.message_user(
                request,
                "The selection holds an id that is not valid; nothing was done.",
                messages.ERROR,
            )
            return HttpResponseRedirect(request.get_full_path())
        return super().response_action(request, queryset, *args, **kw)


def actions_without_permissions(site: admin.AdminSite) -> list[str]:
    """``app.Model.action`` for every registered action that declares no permission: the
    site's own actions and each admin's."""
    missing = []
    for model in apps.get_models():
        if not site.is_registered(model):
            continue
        model_admin = site.get_model_admin(model)
        actions = [name for name, _ in site.actions] + list(model_admin.actions or ())
        for action in actions:
            found = model_admin.get_action(action)  # a name, or the action itself
            if found is not None and not getattr(found[0], "allowed_permissions", None):
                missing.append(f"{model._meta.label}.{found[1]}")
    return missing
