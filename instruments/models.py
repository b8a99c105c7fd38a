"""Instruments (currencies, crypto, other units) and the exchange rates between them."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from organizations.models import ACTIVE, LedgerResource


class Instrument(LedgerResource):
    TYPES = ("crypto", "currency", "commodity", "others")

    name = models.CharField(max_length=256)
    type = models.CharField(max_length=20)
    code = models.CharField(max_length=100)

    class Meta(LedgerResource.Meta):
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "ledger", "code"],
                condition=ACTIVE,
                name="instrument_code_active_uniq",
            )
        ]
        indexes = [
            models.Index(fields=["ledger", "created_at", "id"], name="instr_ledger_created_idx"),
        ]

    def __str__(self) -> str:
        return self.code


class Rate(LedgerResource):
    """One rate record, read through both /instrument-rates and /asset-rates."""

    base_code = models.CharField(max_length=100)
    counter_code = models.CharField(max_length=100)
    amount = models.BigIntegerField()
    scale = models.PositiveSmallIntegerField()
    source = models.CharField(max_length=256, blank=True, default="")

    class Meta(LedgerResource.Meta):
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "ledger", "base_code", "counter_code", "source"],
                condition=ACTIVE,
                name="rate_pair_active_uniq",
            ),
            models.CheckConstraint(condition=Q(amount__gt=0), name="rate_amount_positive"),
            models.CheckConstraint(condition=Q(scale__lte=18), name="rate_scale_range"),
            models.CheckConstraint(
                condition=~Q(base_code=models.F("counter_code")), name="rate_codes_differ"
            ),
        ]
        indexes = [
            models.Index(fields=["ledger", "created_at", "id"], name="rate_ledger_created_idx"),
        ]
