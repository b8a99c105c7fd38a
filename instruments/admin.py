"""Staff admin for instruments and rates. Both are created and deleted through the API (an
instrument brings its external account and balance row with it); the admin browses them and
edits only name, status and metadata."""

from __future__ import annotations

from django.contrib import admin

from instruments.models import Instrument, Rate
from organizations.admin import RESOURCE_READONLY, DeletedFilter, ResourceAdmin


@admin.register(Instrument)
class InstrumentAdmin(ResourceAdmin):
    list_display = ("code", "name", "type", "ledger", "organization", "status_code", "created_at")
    list_filter = (DeletedFilter, "type", "status_code")
    search_fields = ("code", "name", "=id")
    list_select_related = ("ledger", "organization")
    raw_id_fields = ("organization", "ledger")
    readonly_fields = (*RESOURCE_READONLY, "organization", "ledger", "type", "code")


@admin.register(Rate)
class RateAdmin(ResourceAdmin):
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
    list_filter = (DeletedFilter, "status_code", "source")
    search_fields = ("base_code", "counter_code", "source", "=id")
    list_select_related = ("ledger", "organization")
    raw_id_fields = ("organization", "ledger")
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
