"""Reads of instruments used by the writes of other resources (accounts, rates)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from instruments.models import Instrument


def instrument_codes_missing(*, ledger_id: Any, codes: Iterable[str]) -> list[str]:
    """The codes among ``codes`` that are not active instruments of the ledger, in order."""
    wanted = list(dict.fromkeys(codes))
    found = set(
        Instrument.objects.filter(
            ledger_id=ledger_id, code__in=wanted, deleted_at__isnull=True
        ).values_list("code", flat=True)
    )
    return [code for code in wanted if code not in found]
