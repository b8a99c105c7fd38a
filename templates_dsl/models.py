"""Transaction templates: DSL text stored per ledger, unique by code among active ones."""

from __future__ import annotations

from django.db import models

from organizations.models import ACTIVE, LedgerResource


class TransactionTemplate(LedgerResource):
    code = models.CharField(max_length=100)
    text = models.TextField()
    description = models.TextField(null=True, blank=True)
    pending = models.BooleanField(default=False)
    chart_of_accounts_group_name = models.CharField(max_length=256, blank=True, default="")
    asset_code = models.CharField(max_length=100, blank=True, default="")

    class Meta(LedgerResource.Meta):
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "ledger", "code"],
                condition=ACTIVE,
                name="template_code_active_uniq",
            )
        ]
        indexes = [
            models.Index(fields=["ledger", "created_at", "id"], name="tmpl_ledger_created_idx"),
            models.Index(fields=["ledger", "code"], name="tmpl_ledger_code_idx"),
        ]

    def __str__(self) -> str:
        return self.code
