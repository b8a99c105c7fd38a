"""The base of every ModelAdmin in the back office.

Two rules live here so that no admin can forget them: every action declares the permission it
needs (an action without one is open to a view-only user; a test walks the registry), and a
selection holding an id that is not valid is refused with a message instead of crashing the
action."""

from __future__ import annotations

from typing import Any, cast

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponseRedirect


class LedgerModelAdmin(admin.ModelAdmin):
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
    """``app.Model.action`` for every registered action that declares no permission."""
    missing = []
    for model, model_admin in site._registry.items():
        for func, name, _ in cast(Any, model_admin)._get_base_actions():
            if not getattr(func, "allowed_permissions", None):
                missing.append(f"{model._meta.label}.{name}")
    return missing
