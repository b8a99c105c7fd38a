"""What must be true of the accounts and the instrument of a posting: checked once on the
accounts as the statement that locks their balances read them (an account's asset, flags and
status), and once more after the locks (the ledger, the instrument and every touched account
still active). Deleting a ledger, an instrument or an
account takes a lock a posting also takes, so a posting that checks after its locks can never
land in something deleted while it waited."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.models import Q

from instruments.models import Instrument
from ledgerproject.db import by_database
from ledgerproject.errors import ErrorCode, LedgerError
from organizations.locking import ledger_key, lock_ledger_active
from organizations.models import ACCOUNT_STATUSES, Account, Ledger
from organizations.periods import check_open
from transactions.money import CREDIT, DEBIT

# The account statuses that let an account send (be debited) and receive (be credited).
SENDING_STATUSES = frozenset(code for code, status in ACCOUNT_STATUSES.items() if status.sends)
RECEIVING_STATUSES = frozenset(code for code, status in ACCOUNT_STATUSES.items() if status.receives)


def instrument_missing(asset: str) -> LedgerError:
    return LedgerError(
        ErrorCode.ASSET_CODE_NOT_FOUND,
        f"The instrument {asset} does not exist in this ledger or was deleted.",
    )


def check_account(account: Account, direction: str, asset: str) -> None:
    """The account (as the balance locks read it) holds the asset, is active, and may send or
    receive."""
    if account.asset_code != asset:
        raise LedgerError(
            ErrorCode.MISMATCHED_ASSET_CODE,
            f"Account {account.alias} holds {account.asset_code}, not {asset}.",
        )
    if account.deleted_at is not None:
        check_instrument(account, asset)
        raise LedgerError(
            ErrorCode.ACCOUNT_STATUS_RESTRICTION, f"Account {account.alias} is deleted."
        )
    allowed = SENDING_STATUSES if direction == DEBIT else RECEIVING_STATUSES
    if account.status_code not in allowed:
        status = ACCOUNT_STATUSES.get(account.status_code)
        raise LedgerError(
            ErrorCode.ACCOUNT_STATUS_RESTRICTION,
            f"Account {account.alias} has the status {account.status_code}, which "
            f"{status.effect if status else 'is not an account status'}: it may not "
            f"{'send' if direction == DEBIT else 'receive'}.",
        )
    if direction == DEBIT and not account.allow_sending:
        raise LedgerError(
            ErrorCode.ACCOUNT_STATUS_RESTRICTION, f"Account {account.alias} may not send."
        )
    if direction == CREDIT and not account.allow_receiving:
        raise LedgerError(
            ErrorCode.ACCOUNT_STATUS_RESTRICTION, f"Account {account.alias} may not receive."
        )


def check_conversion_account(account: Account) -> None:
    """A conversion goes through the ledger's own conversion account, never through a client's
    account that took its alias before the ledger reserved it."""
    if account.type != Account.CONVERSION:
        raise LedgerError(
            ErrorCode.ACTION_NOT_PERMITTED,
            f"The alias {account.alias} belongs to an account of type {account.type}, not to "
            "the ledger's conversion account: rename that account to convert in its asset.",
        )


@dataclass(frozen=True)
class Guard:
    """After the locks: the ledger is active (and held against its delete), every asset is an
    active instrument of it, none of the accounts was deleted, and nothing written takes
    effect in the ledger's closed period (``earliest``: the earliest effective time written).
    ``writes.write_posting`` folds the whole check into its one statement on PostgreSQL."""

    organization_id: uuid.UUID
    ledger_id: uuid.UUID
    assets: tuple[str, ...]
    account_ids: tuple[uuid.UUID, ...]
    earliest: dt.datetime | None = None

    @classmethod
    def of(
        cls,
        ledger: Any,
        assets: Iterable[str],
        account_ids: Iterable[uuid.UUID],
        earliest: dt.datetime | None = None,
    ) -> Guard:
        """``ledger``: the ledger, or a resource held in it (``locking.ledger_key``)."""
        organization_id, ledger_id = ledger_key(ledger)
        return cls(
            organization_id,
            ledger_id,
            tuple(sorted(set(assets))),
            tuple(sorted(set(account_ids))),
            earliest,
        )


INSTRUMENT_SQL = (
    "SELECT 1 FROM instruments_instrument WHERE organization_id = %s AND ledger_id = %s "
    "AND code = %s AND deleted_at IS NULL AND EXISTS (SELECT 1 FROM organizations_ledger "
    "WHERE organization_id = %s AND id = %s AND deleted_at IS NULL "
    "AND (period_opens_at IS NULL OR %s::timestamptz IS NULL "
    "OR %s::timestamptz >= period_opens_at) "
    "FOR KEY SHARE) LIMIT 1"
)


def _instrument_active_postgresql(
    organization_id: uuid.UUID, ledger_id: uuid.UUID, asset: str, effective_from: Any
) -> bool:
    """Whether the instrument is active in the active ledger, and nothing effective from
    ``effective_from`` on is in its closed period; the ledger's row share-locked so that it
    cannot be deleted or closed before the posting commits."""
    with connection.cursor() as cursor:
        cursor.execute(
            INSTRUMENT_SQL,
            [organization_id, ledger_id, asset, organization_id, ledger_id, *[effective_from] * 2],
        )
        return cursor.fetchone() is not None


def _instrument_active_sqlite(
    organization_id: uuid.UUID, ledger_id: uuid.UUID, asset: str, effective_from: Any
) -> bool:
    found = Instrument.objects.filter(
        organization_id=organization_id, ledger_id=ledger_id, code=asset, deleted_at__isnull=True,
        ledger__deleted_at=None,
    )  # fmt: skip
    if effective_from is not None:
        found = found.filter(
            Q(ledger__period_opens_at__isnull=True) | Q(ledger__period_opens_at__lte=effective_from)
        )
    return found.exists()


_instrument_active = by_database(
    postgresql=_instrument_active_postgresql, sqlite=_instrument_active_sqlite
)


def check_instrument(owner: Any, asset: str, effective_from: dt.datetime | None = None) -> None:
    """The instrument is active in the active ledger of ``owner`` (the ledger, or anything held
    in it: ``locking.ledger_key``), and (``effective_from``) the ledger's closed period ends by
    then, in one query; else the refusal: the ledger deleted, the period closed, the
    instrument missing."""
    if not _instrument_active(*ledger_key(owner), asset, effective_from):
        lock_ledger_active(owner)
        if effective_from is not None:
            organization_id, ledger_id = ledger_key(owner)
            check_open(
                Ledger.objects.get(organization_id=organization_id, pk=ledger_id), effective_from
            )
        raise instrument_missing(asset)


def guard_refusal(guard: Guard) -> LedgerError | None:
    """Why the guard does not hold (the ledger, its closed period, the first missing
    instrument, then the deleted accounts), or None."""
    try:
        for asset in guard.assets:
            check_instrument(guard, asset, guard.earliest)
    except LedgerError as error:
        return error
    deleted = sorted(
        Account.objects.filter(
            organization_id=guard.organization_id,
            pk__in=guard.account_ids,
            deleted_at__isnull=False,
        ).values_list("alias", flat=True)
    )
    if deleted:
        return LedgerError(
            ErrorCode.ACCOUNT_STATUS_RESTRICTION,
            f"Account {', '.join(deleted)} was deleted; nothing was written.",
        )
    return None
