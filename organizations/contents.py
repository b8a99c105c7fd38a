"""Writes of what a ledger holds: portfolios, products and accounts (each account with its
balance row; an instrument's external account with the instrument). Each runs in
``ledger_write``: one database transaction, the ledger held against its delete."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from ledgerproject.db import apply_changes, by_database, unique_among_active
from ledgerproject.errors import ErrorCode, LedgerError
from ledgerproject.metadata import validate_metadata
from organizations import account_tree, monitors
from organizations.locking import (
    ledger_write,
)
from organizations.models import (
    ACCOUNT_STATUSES,
    Account,
    Balance,
    Ledger,
    Portfolio,
    Product,
)
from organizations.overdraft import overdraft_set
from organizations.selectors import external_account_of
from outbox import events


def _soft_delete(obj: Any) -> None:
    obj.deleted_at = timezone.now()
    obj.save(update_fields=["deleted_at", "updated_at"])
    events.record(obj, events.DELETED)


# Portfolios


def portfolio_create(
    *,
    ledger: Ledger,
    name: str,
    entity_id: str | None = None,
    status_code: str = "ACTIVE",
    status_description: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> Portfolio:
    with ledger_write(ledger):
        portfolio = Portfolio.objects.create(
            organization_id=ledger.organization_id,
            ledger=ledger,
            name=name,
            entity_id=entity_id,
            status_code=status_code,
            status_description=status_description,
            metadata=validate_metadata(metadata or {}),
        )
        return events.record(portfolio, events.CREATED)


def portfolio_update(*, portfolio: Portfolio, data: dict[str, Any]) -> Portfolio:
    with ledger_write(portfolio):
        apply_changes(portfolio, data)
        portfolio.save()
        events.record(portfolio, events.UPDATED)
    return portfolio


def portfolio_delete(*, portfolio: Portfolio) -> Portfolio:
    with ledger_write(portfolio):
        _soft_delete(portfolio)
    return portfolio


# Products


def _product_conflict(name: str) -> LedgerError:
    return LedgerError(
        ErrorCode.DUPLICATE_PRODUCT_NAME,
        f"A product named '{name}' already exists in this ledger.",
        fields={"name": "already in use"},
    )


def product_create(
    *,
    ledger: Ledger,
    name: str,
    status_code: str = "ACTIVE",
    status_description: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> Product:
    same_name = Product.objects.filter(
        organization_id=ledger.organization_id, ledger_id=ledger.pk, name=name
    )
    with ledger_write(ledger), unique_among_active(same_name, _product_conflict(name)):
        product = Product.objects.create(
            organization_id=ledger.organization_id,
            ledger=ledger,
            name=name,
            status_code=status_code,
            status_description=status_description,
            metadata=validate_metadata(metadata or {}),
        )
        return events.record(product, events.CREATED)


def product_update(*, product: Product, data: dict[str, Any]) -> Product:
    name = data.get("name")
    same_name = (
        Product.objects.filter(
            organization_id=product.organization_id, ledger_id=product.ledger_id, name=name
        )
        if name is not None
        else Product.objects.none()
    )
    with ledger_write(product):
        apply_changes(product, data)
        with unique_among_active(same_name, _product_conflict(str(name)), exclude=product.pk):
            product.save()
        events.record(product, events.UPDATED)
    return product


def product_delete(*, product: Product) -> Product:
    """Accounts assigned to the product keep their productId; reads still show the product."""
    with ledger_write(product):
        _soft_delete(product)
    return product


# Accounts


def _alias_conflict(alias: str) -> LedgerError:
    return LedgerError(
        ErrorCode.ALIAS_UNAVAILABLE,
        f"The alias '{alias}' is already used by another account of this ledger.",
        fields={"alias": "already in use"},
    )


def _refuse_external(what: str) -> LedgerError:
    return LedgerError(
        ErrorCode.EXTERNAL_ACCOUNT_MODIFICATION,
        f"External accounts are managed by the ledger; {what}.",
    )


def _check_account_status(code: str) -> None:
    """An account's status is one of the listed codes (each has its effect on postings)."""
    if code not in ACCOUNT_STATUSES:
        listed = ", ".join(ACCOUNT_STATUSES)
        raise LedgerError(
            ErrorCode.BAD_REQUEST,
            f"An account's status.code is one of {listed}; {code[:100]!r} is not.",
            fields={"status.code": f"one of {listed}"},
        )


def _active_portfolio(ledger_id: Any, portfolio_id: uuid.UUID) -> Portfolio:
    portfolio = Portfolio.objects.filter(
        pk=portfolio_id, ledger_id=ledger_id, deleted_at__isnull=True
    ).first()
    if portfolio is None:
        raise LedgerError(
            ErrorCode.PORTFOLIO_NOT_FOUND,
            f"Portfolio {portfolio_id} was not found in this ledger.",
            fields={"portfolioId": "not found"},
        )
    return portfolio


def _active_product(ledger_id: Any, product_id: uuid.UUID) -> Product:
    product = Product.objects.filter(
        pk=product_id, ledger_id=ledger_id, deleted_at__isnull=True
    ).first()
    if product is None:
        raise LedgerError(
            ErrorCode.PRODUCT_NOT_FOUND,
            f"Product {product_id} was not found in this ledger.",
            fields={"productId": "not found"},
        )
    return product


def _account_insert(account: Account, overdraft_limit: dict[str, int] | None = None) -> Account:
    """Save a new account with its balance row (zero, with its overdraft limit), inside the
    caller's transaction, and its event once the account is whole."""
    account.save(force_insert=True)
    new_balance(account).save(force_insert=True)
    if overdraft_limit:
        account.balance = overdraft_set(
            account=account,
            amount=overdraft_limit.get("amount"),
            scale=overdraft_limit.get("scale"),
        )
    return events.record(account, events.CREATED)


def external_account_create(*, ledger: Ledger, asset_code: str) -> Account:
    """``@external/<CODE>``: the ledger's counterparty for an instrument; it may go negative.

    Called by ``instrument_create`` inside its transaction."""
    with transaction.atomic():
        return _account_insert(_managed_account(ledger, asset_code, Account.EXTERNAL))


def conversion_accounts_ensure(*, ledger: Ledger, asset_codes: Iterable[str]) -> set[str]:
    """Inside a posting's database transaction, before its balance locks: ``@conversion/<CODE>``
    for each of these assets that has none (docs/CONVERSIONS.md), made by the first conversion
    in or out of the asset and committed with it, or not at all. Answers the codes that are
    not active instruments of the ledger (none made for them).

    Every asset's instrument is held first, in code order (``hold_instrument``), so that it is
    not deleted meanwhile. Two first conversions racing insert the account once: the second's
    insert waits for the first to commit, then does nothing, and the posting reads the first's
    account."""
    codes = sorted(set(asset_codes))
    missing = {code for code in codes if not _held(ledger, code)}
    wanted = {f"{Account.CONVERSION_PREFIX}{code}": code for code in codes if code not in missing}
    for alias in sorted(set(wanted) - _active_aliases(ledger, wanted)):
        account = conversion_account(ledger, wanted[alias])
        Account.objects.bulk_create([account], ignore_conflicts=True)
        if Account.objects.filter(organization_id=ledger.organization_id, pk=account.pk).exists():
            new_balance(account).save(force_insert=True)
            events.record(account, events.CREATED)
    return missing


def conversion_account(ledger: Ledger, asset_code: str) -> Account:
    """``@conversion/<CODE>`` as the ledger makes it (not saved)."""
    return _managed_account(ledger, asset_code, Account.CONVERSION)


def _managed_account(ledger: Ledger, asset_code: str, kind: str) -> Account:
    """An account the ledger makes for an instrument, ``@external/<CODE>`` or
    ``@conversion/<CODE>`` (not saved)."""
    prefix, name = {
        Account.EXTERNAL: (Account.EXTERNAL_PREFIX, "External"),
        Account.CONVERSION: (Account.CONVERSION_PREFIX, "Conversion"),
    }[kind]
    return Account(
        organization_id=ledger.organization_id,
        ledger=ledger,
        name=f"{name} {asset_code}",
        alias=f"{prefix}{asset_code}",
        type=kind,
        asset_code=asset_code,
    )


def new_balance(account: Account) -> Balance:
    """A new account's balance row: zero (not saved)."""
    return Balance(
        organization_id=account.organization_id,
        ledger_id=account.ledger_id,
        account=account,
        asset_code=account.asset_code,
        is_external=account.is_external,
    )


def hold_instrument(ledger: Ledger, asset_code: str) -> None:
    """The asset is an active instrument of the ledger, and stays one until this database
    transaction ends (else 0034). An instrument is created and deleted together with its
    ``@external/<CODE>`` account, so that account answers for it: its row is share-locked, which
    keeps the instrument's delete out (``instrument_delete`` locks that row first, before any
    balance) and nothing else: neither another holder, nor the foreign-key checks of the
    postings that name the account."""
    if not _held(ledger, asset_code):
        raise LedgerError(
            ErrorCode.ASSET_CODE_NOT_FOUND,
            f"No active instrument with code '{asset_code}' in this ledger.",
            fields={"assetCode": "not an active instrument of this ledger"},
        )


# The instrument's external account, share-locked (PostgreSQL; parameters: the organization,
# the ledger, the alias). Django's select_for_update has no FOR SHARE.
HOLD_INSTRUMENT = (
    "SELECT 1 FROM organizations_account WHERE organization_id = %s AND ledger_id = %s "
    "AND alias = %s AND type = 'external' AND deleted_at IS NULL FOR SHARE"
)


def _held_postgresql(ledger: Ledger, asset_code: str) -> bool:
    alias = f"{Account.EXTERNAL_PREFIX}{asset_code}"
    with connection.cursor() as cursor:
        cursor.execute(HOLD_INSTRUMENT, [ledger.organization_id, ledger.pk, alias])
        return cursor.fetchone() is not None


def _held_sqlite(ledger: Ledger, asset_code: str) -> bool:
    """SQLite has no row locks: its writers are serialized."""
    return external_account_of(ledger.organization_id, ledger.pk, asset_code).exists()


_held = by_database(postgresql=_held_postgresql, sqlite=_held_sqlite)


def _active_aliases(ledger: Ledger, aliases: Iterable[str]) -> set[str]:
    return set(
        Account.objects.filter(
            organization_id=ledger.organization_id,
            ledger_id=ledger.pk,
            alias__in=list(aliases),
            deleted_at__isnull=True,
        ).values_list("alias", flat=True)
    )


def external_account_delete(*, ledger_id: Any, asset_code: str) -> int:
    """Soft-delete the accounts the ledger manages for an instrument (``@external/<CODE>`` and
    ``@conversion/<CODE>``), with their events; called by ``instrument_delete`` inside its
    transaction."""
    found = Account.objects.select_related("balance").filter(
        ledger_id=ledger_id,
        alias__in=[f"{prefix}{asset_code}" for prefix in Account.MANAGED_PREFIXES],
        type__in=[Account.EXTERNAL, Account.CONVERSION],
        deleted_at__isnull=True,
    )
    deleted = 0
    for account in found:
        monitors.retire_with_account(account)
        _soft_delete(account)
        deleted += 1
    return deleted


def account_create(
    *,
    ledger: Ledger,
    asset_code: str,
    alias: str | None = None,
    name: str = "",
    type: str = "deposit",
    entity_id: str | None = None,
    portfolio_id: uuid.UUID | None = None,
    product_id: uuid.UUID | None = None,
    parent_account_id: uuid.UUID | None = None,
    allow_sending: bool = True,
    allow_receiving: bool = True,
    status_code: str = "ACTIVE",
    status_description: str | None = None,
    metadata: dict[str, Any] | None = None,
    overdraft_limit: dict[str, int] | None = None,
) -> Account:
    if type in (Account.EXTERNAL, Account.CONVERSION) or (alias or "").startswith(
        Account.MANAGED_PREFIXES
    ):
        raise _refuse_external("they cannot be created through the API")
    if alias is not None and not re.fullmatch(Account.ALIAS_PATTERN, alias):
        raise LedgerError(
            ErrorCode.BAD_REQUEST,
            f"The alias {alias!r} is not valid: @ then 1 to 100 letters, digits, _ - / or .",
            fields={"alias": "expected @ then 1 to 100 of A-Z a-z 0-9 _ - / ."},
        )
    _check_account_status(status_code)
    if portfolio_id is not None:
        _active_portfolio(ledger.pk, portfolio_id)
    if product_id is not None:
        _active_product(ledger.pk, product_id)
    account = Account(
        organization_id=ledger.organization_id,
        ledger=ledger,
        asset_code=asset_code,
        name=name,
        type=type,
        entity_id=entity_id,
        portfolio_id=portfolio_id,
        product_id=product_id,
        parent_account_id=parent_account_id,
        allow_sending=allow_sending,
        allow_receiving=allow_receiving,
        status_code=status_code,
        status_description=status_description,
        metadata=validate_metadata(metadata or {}),
    )
    account.alias = alias or f"@{account.id}"
    same_alias = Account.objects.filter(
        organization_id=ledger.organization_id, ledger_id=ledger.pk, alias=account.alias
    )
    with ledger_write(ledger, account_tree=parent_account_id is not None):
        account_tree.parent_for(account, parent_account_id, moving=False)
        hold_instrument(ledger, asset_code)
        with unique_among_active(same_alias, _alias_conflict(account.alias)):
            _account_insert(account, overdraft_limit)
        if parent_account_id is not None:
            monitors.watch_new_child(account)
    return account


def account_update(*, account: Account, data: dict[str, Any]) -> Account:
    if account.is_external:
        raise _refuse_external("they cannot be changed")
    if "status_code" in data:
        _check_account_status(data["status_code"])
    if data.get("portfolio_id") is not None:
        _active_portfolio(account.ledger_id, data["portfolio_id"])
    if data.get("product_id") is not None:
        _active_product(account.ledger_id, data["product_id"])
    data = dict(data)
    limit = data.pop("overdraft_limit", None)
    alias: str = data.get("alias") or account.alias
    if alias == account.alias:
        data = {k: v for k, v in data.items() if k != "alias"}
    elif alias.startswith(Account.MANAGED_PREFIXES):
        raise _refuse_external("the @external/ and @conversion/ aliases are theirs alone")
    same_alias = Account.objects.filter(
        organization_id=account.organization_id, ledger_id=account.ledger_id, alias=alias
    )
    # The row is saved whole, so it is read again under its lock and changed as it is now: an
    # update never undoes a change committed since the account was read (a move above all,
    # which could otherwise leave a cycle behind). A move also takes the ledger's lock for
    # changes of the account tree first, and checks the tree's rules under it.
    moving = "parent_account_id" in data
    with ledger_write(account, account_tree=moving):
        current = (
            Account.objects.select_for_update(no_key=True)
            .filter(organization_id=account.organization_id, pk=account.pk)
            .get()
        )
        if current.deleted_at is not None:
            raise LedgerError(ErrorCode.ALREADY_REMOVED, "The account has already been removed.")
        old_parent = current.parent_account_id
        if moving and data["parent_account_id"] != old_parent:
            account_tree.parent_for(current, data["parent_account_id"], moving=True)
        apply_changes(current, data)
        if "alias" in data:
            with unique_among_active(same_alias, _alias_conflict(alias), exclude=current.pk):
                current.save()
        else:
            current.save()
        if current.parent_account_id != old_parent:
            monitors.after_move(current, old_parent)
        if limit is not None:
            current.balance = overdraft_set(
                account=current, amount=limit.get("amount"), scale=limit.get("scale")
            )
        events.record(current, events.UPDATED)
    return current


def account_delete(*, account: Account) -> Account:
    """Refused while the balance holds anything; the balance row is locked while checking."""
    if account.is_external:
        raise _refuse_external("they are removed with their instrument")
    with ledger_write(account, account_tree=True):
        # The account's row before its balance's, as an update takes them: never the reverse.
        Account.objects.select_for_update(no_key=True).filter(
            organization_id=account.organization_id, pk=account.pk
        ).exists()
        account_tree.check_no_children(account)
        balance = (
            Balance.objects.select_for_update()
            .filter(organization_id=account.organization_id, account_id=account.pk)
            .first()
        )
        if balance is not None and (balance.available or balance.on_hold):
            raise LedgerError(
                ErrorCode.BALANCE_REMAINING,
                "The account still holds a balance; move it out before deleting the account.",
            )
        monitors.retire_with_account(account)
        _soft_delete(account)
    return account
