"""List filters for instruments and for both faces of rates."""

from __future__ import annotations

import django_filters

from instruments.serializers import ASSET_RATE, INSTRUMENT_RATE, RateFace
from ledgerproject.api.filters import MultiValueFilter


class InstrumentFilter(django_filters.FilterSet):
    type = django_filters.CharFilter(field_name="type")
    code = django_filters.CharFilter(field_name="code")
    status = MultiValueFilter(field_name="status_code")


def rate_filter(face: RateFace) -> type[django_filters.FilterSet]:
    """The pair filters under the face's names, plus source and status."""
    filters = {
        face.base: django_filters.CharFilter(field_name="base_code"),
        face.counter: django_filters.CharFilter(field_name="counter_code"),
        "source": django_filters.CharFilter(field_name="source"),
        "status": MultiValueFilter(field_name="status_code"),
    }
    return type(f"{face.label}Filter", (django_filters.FilterSet,), filters)


InstrumentRateFilter = rate_filter(INSTRUMENT_RATE)
AssetRateFilter = rate_filter(ASSET_RATE)
