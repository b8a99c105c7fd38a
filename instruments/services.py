"""Writes for instruments and rates. Each runs in one database transaction.

An instrument is created together with its external account (``@external/<CODE>``) and that
account's balance row, and deleted together with it."""

from __future__ import annotations

import re
from typing import Any

import pycountry
from django.db import IntegrityError
from django.utils import timezone

from instruments.models import Instrument, Rate, RateValue
from instruments.selectors import instrument_codes_missing
from ledgerproject.db import apply_changes, unique_among_active
from ledgerproject.errors import ErrorCode, LedgerError
from ledgerproject.metadata import validate_metadata
from organizations.contents import external_account_create, external_account_delete
from organizations.locking import ledger_write
from organizations.models import Balance, Ledger
from organizations.selectors import external_account_of
from outbox import events

CODE_PATTERN = re.compile(r"[A-Z0-9]+")
# The instrument's external account is ``@external/<CODE>``, and an alias is at most 101
# characters: a longer code could not name it (PostgreSQL refused the row: a 500).
MAX_CODE_LENGTH = 101 - len("@external/")
INACTIVE_STATUS = {"status_code": "INACTIVE", "status_description": None}


def instrument_validate(*, type: str, code: str) -> None:
    """Type one of ``Instrument.TYPES`` (0040); code upper-case letters and digits (0004), an
    ISO 4217 code for currencies (0005)."""
    if type not in Instrument.TYPES:
        raise LedgerError(
            ErrorCode.INVALID_TYPE,
            f"type must be one of {', '.join(Instrument.TYPES)}.",
            fields={"type": "invalid type"},
        )
    if not CODE_PATTERN.fullmatch(code):
        raise LedgerError(
            ErrorCode.CODE_UPPERCASE,
            "code must be upper-case letters and digits.",
            fields={"code": "upper-case letters and digits only"},
        )
    if len(code) > MAX_CODE_LENGTH:
        raise LedgerError(
            ErrorCode.BAD_REQUEST,
            f"code may have at most {MAX_CODE_LENGTH} characters.",
            fields={"code": f"at most {MAX_CODE_LENGTH} characters"},
        )
    if type == "currency" and pycountry.currencies.get(alpha_3=code) is None:
        raise LedgerError(
            ErrorCode.CURRENCY_CODE,
            f"'{code}' is not an ISO 4217 currency code.",
            fields={"code": "not an ISO 4217 code"},
        )


def _code_conflict(code: str) -> LedgerError:
    return LedgerError(
        ErrorCode.INSTRUMENT_CODE_DUPLICATE,
        f"An instrument with code '{code}' already exists in this ledger.",
        fields={"code": "already in use"},
    )


def instrument_create(
    *,
    ledger: Ledger,
    name: str,
    type: str,
    code: str,
    status_code: str = "ACTIVE",
    status_description: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> Instrument:
    instrument_validate(type=type, code=code)
    same_code = Instrument.objects.filter(
        organization_id=ledger.organization_id, ledger_id=ledger.pk, code=code
    )
    with ledger_write(ledger), unique_among_active(same_code, _code_conflict(code)):
        instrument = Instrument.objects.create(
            organization_id=ledger.organization_id,
            ledger=ledger,
            name=name,
            type=type,
            code=code,
            status_code=status_code,
            status_description=status_description,
            metadata=validate_metadata(metadata or {}),
        )
        external_account_create(ledger=ledger, asset_code=code)
        events.record(instrument, events.CREATED)
    return instrument


def instrument_update(*, instrument: Instrument, data: dict[str, Any]) -> Instrument:
    """Only name, status and metadata change; the input serializer refuses the rest."""
    with ledger_write(instrument):
        apply_changes(instrument, data)
        instrument.save()
        events.record(instrument, events.UPDATED)
    return instrument


def instrument_delete(*, instrument: Instrument) -> Instrument:
    """Refused (0012) while a non-external account of the instrument holds anything, or any
    account, the external one included, has money on hold (a pending transaction whose commit
    would land in the deleted instrument).

    The instrument's external account is locked first, against those that hold the instrument
    (``contents.hold_instrument``: an account's create, a conversion); then its balance rows
    are locked in id order (the order the posting engine uses), so a posting running
    concurrently either finishes first and is seen here, or waits."""
    with ledger_write(instrument):
        external_account_of(
            instrument.organization_id, instrument.ledger_id, instrument.code
        ).select_for_update(no_key=True).exists()
        held = (
            Balance.objects.filter(
                organization_id=instrument.organization_id,
                ledger_id=instrument.ledger_id,
                asset_code=instrument.code,
            )
            .order_by("pk")
            .select_for_update()
            .values_list("is_external", "available", "on_hold")
        )
        if any(on_hold or (available and not external) for external, available, on_hold in held):
            raise LedgerError(
                ErrorCode.BALANCE_REMAINING,
                f"Accounts of '{instrument.code}' still hold a balance; move it to the external "
                "account before deleting the instrument.",
            )
        instrument.deleted_at = timezone.now()
        instrument.save(update_fields=["deleted_at", "updated_at"])
        external_account_delete(ledger_id=instrument.ledger_id, asset_code=instrument.code)
        events.record(instrument, events.DELETED)
    return instrument


# Rates


def _pair_conflict(base_code: str, counter_code: str, source: str) -> LedgerError:
    return LedgerError(
        ErrorCode.DUPLICATE_ASSET_PAIR,
        f"An active rate {base_code}/{counter_code} from source '{source}' already exists.",
    )


def _pair_taken(rate: Rate) -> bool:
    return (
        Rate.objects.filter(
            ledger_id=rate.ledger_id,
            base_code=rate.base_code,
            counter_code=rate.counter_code,
            source=rate.source,
            deleted_at__isnull=True,
        )
        .exclude(pk=rate.pk)
        .exists()
    )


def rate_create(
    *,
    ledger: Ledger,
    base_code: str,
    counter_code: str,
    amount: int,
    scale: int,
    source: str = "",
    status_code: str = "ACTIVE",
    status_description: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> Rate:
    if base_code == counter_code:
        raise LedgerError(ErrorCode.BAD_REQUEST, "The base and counter codes must differ.")
    missing = instrument_codes_missing(ledger_id=ledger.pk, codes=[base_code, counter_code])
    if missing:
        raise LedgerError(
            ErrorCode.ASSET_CODE_NOT_FOUND,
            f"No active instrument in this ledger with code {', '.join(missing)}.",
        )
    rate = Rate(
        organization_id=ledger.organization_id,
        ledger=ledger,
        base_code=base_code,
        counter_code=counter_code,
        amount=amount,
        scale=scale,
        source=source,
        status_code=status_code,
        status_description=status_description,
        metadata=validate_metadata(metadata or {}),
    )
    try:
        with ledger_write(ledger):
            if _pair_taken(rate):
                raise _pair_conflict(base_code, counter_code, source)
            rate.save(force_insert=True)
            _record_value(rate)
            events.record(rate, events.CREATED)
    except IntegrityError:
        raise _pair_conflict(base_code, counter_code, source) from None
    return rate


def _record_value(rate: Rate) -> None:
    """The rate's value from now on, kept beside the values it held before (``RateValue``)."""
    RateValue.objects.create(
        organization_id=rate.organization_id,
        ledger_id=rate.ledger_id,
        rate=rate,
        amount=rate.amount,
        scale=rate.scale,
        valid_from=rate.updated_at,
    )


def rate_update(*, rate: Rate, data: dict[str, Any]) -> Rate:
    """amount, scale, source, status and metadata; a new source must keep the pair unique.
    A change that names the amount or the scale sets the rate's value from now on, even the
    same one (it is then as old as this change: a ledger's ``max_rate_age`` counts from it).
    The row is read again under its lock and saved as it is now, so a change made meanwhile
    is never undone, and the value conversions use is always the rate's amount and scale."""
    try:
        with ledger_write(rate):
            current = (
                Rate.objects.select_for_update(no_key=True)
                .filter(organization_id=rate.organization_id, pk=rate.pk)
                .get()
            )
            apply_changes(current, data)
            if "source" in data and _pair_taken(current):
                raise _pair_conflict(current.base_code, current.counter_code, current.source)
            current.save()
            if "amount" in data or "scale" in data:
                _record_value(current)
            events.record(current, events.UPDATED)
    except IntegrityError:
        raise _pair_conflict(rate.base_code, rate.counter_code, rate.source) from None
    return current


def rate_delete(*, rate: Rate) -> Rate:
    """A deleted rate keeps its record, with status INACTIVE and deletedAt set."""
    with ledger_write(rate):
        apply_changes(rate, INACTIVE_STATUS)
        rate.deleted_at = timezone.now()
        rate.save(update_fields=["status_code", "status_description", "deleted_at", "updated_at"])
        events.record(rate, events.DELETED)
    return rate
