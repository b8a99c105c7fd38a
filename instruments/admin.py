"""Staff admin for instruments and rates. An instrument is created here through the same
service as the API (it brings its external account and balance row with it); rates are created
through the API. The admin edits only name, status and metadata, and deactivates through the
same services as the API's DELETE."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin

from instruments import services
from instruments.models import Instrument, Rate
from organizations.admin import (
    RESOURCE_READONLY,
    DeletedFilter,
    ResourceAdmin,
    filled_in,
    scope_filter,
)
from organizations.models import Ledger


class InstrumentForm(forms.ModelForm):
    """The type chosen from the documented list (the service refuses any other, 0040)."""

    type = forms.ChoiceField(choices=[(t, t) for t in Instrument.TYPES])


@admin.register(Instrument)
class InstrumentAdmin(ResourceAdmin):
    form = InstrumentForm
    list_display = ("code", "name", "type", "ledger", "organization", "status_code", "created_at")
    list_filter = (scope_filter("ledger", Ledger), DeletedFilter, "type", "status_code")
    search_fields = ("code", "name", "=id")
    list_select_related = ("ledger", "organization")
    autocomplete_fields = ("organization", "ledger")
    readonly_fields = (*RESOURCE_READONLY, "organization", "ledger", "type", "code")

    add_fields = add_required = ("ledger", "name", "type", "code")

    def create_one(self, data: dict[str, Any]) -> Instrument:
        return services.instrument_create(**data)

    def update_one(self, obj: Instrument, data: dict[str, Any]) -> Instrument:
        return services.instrument_update(instrument=obj, data=data)

    def deactivate_one(self, obj: Instrument) -> None:
        services.instrument_delete(instrument=obj)


@admin.register(Rate)
class RateAdmin(ResourceAdmin):
    list_title = "Asset rates"
    list_display = (
        "base_code",
        "counter_code",
        "amount",
        "scale",
        "source",
        "ledger",
        "status_code",
        "created_at",
    )
    list_filter = (scope_filter("ledger", Ledger), DeletedFilter, "status_code", "source")
    search_fields = ("base_code", "counter_code", "source", "=id")
    list_select_related = ("ledger", "organization")
    autocomplete_fields = ("organization", "ledger")
    readonly_fields = (
        *RESOURCE_READONLY,
        "organization",
        "ledger",
        "base_code",
        "counter_code",
        "amount",
        "scale",
        "source",
    )

    add_fields = ("ledger", "base_code", "counter_code", "amount", "scale", "source")
    add_required = ("ledger", "base_code", "counter_code", "amount", "scale")

    def create_one(self, data: dict[str, Any]) -> Rate:
        return services.rate_create(**filled_in(data))

    def update_one(self, obj: Rate, data: dict[str, Any]) -> Rate:
        return services.rate_update(rate=obj, data=data)

    def deactivate_one(self, obj: Rate) -> None:
        services.rate_delete(rate=obj)
