"""Writes of transaction templates: the text is compiled and checked before anything is stored."""

from __future__ import annotations

from django.utils import timezone

from instruments.selectors import instrument_codes_missing
from ledgerproject.db import unique_among_active
from ledgerproject.errors import ErrorCode, LedgerError
from organizations.locking import ledger_write
from organizations.models import Ledger
from outbox import events
from templates_dsl import ast
from templates_dsl.compile import compile_template
from templates_dsl.errors import TemplateError
from templates_dsl.models import TransactionTemplate


def template_compile_for(*, ledger: Ledger, text: str) -> ast.Template:
    """Parse and check ``text``; its send asset (and converted asset) must be instruments of
    the ledger."""
    template = compile_template(text)
    named = [(template.send.asset, template.send.asset_span)]
    if template.convert is not None:
        named.append((template.convert.asset, template.convert.asset_span))
    missing = instrument_codes_missing(ledger_id=ledger.pk, codes=[asset for asset, _ in named])
    for asset, span in named:
        if asset in missing:
            raise TemplateError.at(span, f"the instrument {asset} does not exist in this ledger")
    return template


def _fields(template: ast.Template, text: str) -> dict[str, object]:
    return {
        "code": template.code,
        "text": text,
        "description": template.description,
        "pending": bool(template.pending),
        "chart_of_accounts_group_name": template.group_name,
        "asset_code": template.send.asset,
        "metadata": dict(template.metadata),
    }


def _code_in_use(code: str) -> LedgerError:
    return LedgerError(
        ErrorCode.TEMPLATE_CODE_IN_USE,
        f"The template code '{code}' is already in use in this ledger.",
    )


def template_create(*, ledger: Ledger, text: str) -> TransactionTemplate:
    compiled = template_compile_for(ledger=ledger, text=text)
    same_code = TransactionTemplate.objects.filter(
        organization_id=ledger.organization_id, ledger_id=ledger.pk, code=compiled.code
    )
    with ledger_write(ledger), unique_among_active(same_code, _code_in_use(compiled.code)):
        template = TransactionTemplate.objects.create(
            organization_id=ledger.organization_id, ledger=ledger, **_fields(compiled, text)
        )
        return events.record(template, events.CREATED)


def template_replace(*, template: TransactionTemplate, text: str) -> TransactionTemplate:
    compiled = template_compile_for(ledger=template.ledger, text=text)
    if compiled.code != template.code:
        raise LedgerError(
            ErrorCode.UNMODIFIABLE_FIELD,
            f"The text names code '{compiled.code}' but this template is '{template.code}'; "
            "a template's code cannot change.",
            fields={"code": "cannot be modified"},
        )
    with ledger_write(template):
        for name, value in _fields(compiled, text).items():
            setattr(template, name, value)
        template.save()
        events.record(template, events.UPDATED)
    return template


def template_delete(*, template: TransactionTemplate) -> TransactionTemplate:
    with ledger_write(template):
        template.deleted_at = timezone.now()
        template.save(update_fields=["deleted_at", "updated_at"])
        events.record(template, events.DELETED)
    return template
