"""Instruments (currencies, crypto, other units) and the exchange rates between them."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from ledgerproject.db import new_id
from ledgerproject.tenancy import TenantForeignKey, TenantRow
from organizations.models import ACTIVE, Ledger, LedgerResource, Organization


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
            # A conversion's candidates: the rates of one pair, deleted ones included (a
            # posting effective in the past may need a rate deleted since).
            models.Index(fields=["ledger", "base_code", "counter_code"], name="rate_pair_idx"),
        ]


class RateValue(TenantRow, models.Model):
    """A value a rate held from ``valid_from`` until its next value: written with the rate and
    with every change of its amount or scale, and never changed, so that a posting effective at
    a past time converts at the value in force then (``instruments.conversion``)."""

    id = models.UUIDField(primary_key=True, default=new_id, editable=False)
    organization = models.ForeignKey(
        Organization, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    ledger = TenantForeignKey(Ledger, on_delete=models.PROTECT, related_name="+", db_index=False)
    rate = TenantForeignKey(Rate, on_delete=models.PROTECT, related_name="values", db_index=False)
    amount = models.BigIntegerField()
    scale = models.PositiveSmallIntegerField()
    valid_from = models.DateTimeField()

    class Meta:
        ordering = ["valid_from", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="rate_value_amount_positive"),
            models.CheckConstraint(condition=Q(scale__lte=18), name="rate_value_scale_range"),
        ]
        indexes = [models.Index(fields=["rate", "valid_from"], name="rate_value_rate_idx")]
