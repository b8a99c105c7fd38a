"""Instrument and rate endpoints: thin views over the services. The two rate faces differ only
in their serializers and filters; both read and write the same ``Rate`` records."""

from __future__ import annotations

from typing import Any

from instruments import filters, services
from instruments import serializers as s
from instruments.models import Instrument, Rate
from ledgerproject.api.views import CollectionView, ItemView


class InstrumentCollection(CollectionView):
    """Instruments of a ledger: list (filters type, code, status, metadata) and create;
    creating one also creates its external account @external/<CODE>."""

    model = Instrument
    noun = "instrument"
    output_serializer = s.InstrumentOut
    create_serializer = s.InstrumentCreateIn
    filterset_class = filters.InstrumentFilter

    def perform_create(self, data: dict[str, Any]) -> Instrument:
        return services.instrument_create(ledger=self.ledger, **data)


class InstrumentItem(ItemView):
    """One instrument: read, update (name, status, metadata), soft-delete (refused with
    422 0012 while accounts of the instrument hold a balance)."""

    model = Instrument
    noun = "instrument"
    output_serializer = s.InstrumentOut
    update_serializer = s.InstrumentUpdateIn

    def perform_update(self, obj: Instrument, data: dict[str, Any]) -> Instrument:
        return services.instrument_update(instrument=obj, data=data)

    def perform_delete(self, obj: Instrument) -> None:
        services.instrument_delete(instrument=obj)


class RateCollection(CollectionView):
    model = Rate
    noun = "rate"

    def perform_create(self, data: dict[str, Any]) -> Rate:
        return services.rate_create(ledger=self.ledger, **data)


class RateItem(ItemView):
    model = Rate
    noun = "rate"

    def perform_update(self, obj: Rate, data: dict[str, Any]) -> Rate:
        return services.rate_update(rate=obj, data=data)

    def perform_delete(self, obj: Rate) -> None:
        services.rate_delete(rate=obj)


class InstrumentRateCollection(RateCollection):
    """Rates named by baseInstrumentCode/counterInstrumentCode: list and create."""

    output_serializer = s.InstrumentRateOut
    create_serializer = s.InstrumentRateCreateIn
    filterset_class = filters.InstrumentRateFilter


class InstrumentRateItem(RateItem):
    """One rate (same records as /asset-rates): read, update, delete (status INACTIVE)."""

    output_serializer = s.InstrumentRateOut
    update_serializer = s.InstrumentRateUpdateIn


class AssetRateCollection(RateCollection):
    """Rates named by baseAssetCode/counterAssetCode: list and create."""

    output_serializer = s.AssetRateOut
    create_serializer = s.AssetRateCreateIn
    filterset_class = filters.AssetRateFilter


class AssetRateItem(RateItem):
    """One rate (same records as /instrument-rates): read, update, delete (status INACTIVE)."""

    output_serializer = s.AssetRateOut
    update_serializer = s.AssetRateUpdateIn
