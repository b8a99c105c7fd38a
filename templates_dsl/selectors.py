"""Reads of transaction templates by code within a ledger."""

from __future__ import annotations

from django.db.models import QuerySet

from ledgerproject.errors import ErrorCode, LedgerError
from organizations.models import Ledger
from templates_dsl.models import TransactionTemplate


def templates_active(ledger: Ledger) -> QuerySet[TransactionTemplate]:
    return TransactionTemplate.objects.filter(
        organization_id=ledger.organization_id, ledger_id=ledger.pk, deleted_at__isnull=True
    )


def template_get(
    ledger: Ledger, code: str, *, removed_is_error: bool = False
) -> TransactionTemplate:
    """The active template with this code: 404 0007 when none, or 400 0013 when
    ``removed_is_error`` and only deleted ones remain."""
    if "\x00" in code:  # no code holds one, and PostgreSQL cannot compare it
        raise LedgerError(ErrorCode.NOT_FOUND, "No transaction template with this code.")
    template = templates_active(ledger).filter(code=code).first()
    if template is not None:
        template.ledger = ledger
        return template
    if (
        removed_is_error
        and TransactionTemplate.objects.filter(
            organization_id=ledger.organization_id, ledger_id=ledger.pk, code=code
        ).exists()
    ):
        raise LedgerError(ErrorCode.ALREADY_REMOVED, f"The template '{code}' was already removed.")
    raise LedgerError(ErrorCode.NOT_FOUND, f"No transaction template with code '{code}'.")
