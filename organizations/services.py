"""Writes for organizations, ledgers, portfolios, products, accounts and API tokens. Each runs in
one database transaction."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.db.models import Value
from django.db.models.functions import Concat, Substr
from django.utils import timezone

from ledgerproject.db import apply_changes, unique_among_active
from ledgerproject.errors import ErrorCode, LedgerError
from ledgerproject.metadata import validate_metadata
from organizations.locking import (
    ledger_deleted,
    ledger_write,
    lock_ledger_for_delete,
    with_tree_lock,
)
from organizations.models import (
    Account,
    ApiToken,
    Balance,
    Ledger,
    Organization,
    Portfolio,
    Product,
)
from organizations.tokens import generate_secret

ACTIVE_STATUS = {"status_code": "ACTIVE", "status_description": None}


def _parent_for(
    principal: Any, parent: Organization | None, parent_id: uuid.UUID | None
) -> Organization | None:
    """The locked parent row, when it is active and the principal reaches it."""
    if parent_id is None:
        return None
    if (
        parent is None
        or parent.deleted_at is not None
        or (principal is not None and not principal.reaches(parent.path))
    ):
        raise LedgerError(
            ErrorCode.PARENT_ORGANIZATION_NOT_FOUND,
            f"Parent organization {parent_id} was not found.",
            fields={"parentOrganizationId": "not found"},
        )
    return parent


def _require_unlimited(principal: Any) -> None:
    if principal is not None and principal.is_limited:
        raise LedgerError(
            ErrorCode.INSUFFICIENT_PRIVILEGES,
            "Only a token not limited to organizations may create or move a top-level "
            "organization.",
        )


def _locked_current(
    locked: dict[uuid.UUID, Organization], organization: Organization, principal: Any
) -> Organization:
    """The organization as it is now that its tree is locked: still there, still reached by
    the principal (a move may have taken it out of reach), and not deleted."""
    current = locked.get(organization.pk)
    if current is None or (principal is not None and not principal.reaches(current.path)):
        raise LedgerError(ErrorCode.NOT_FOUND, "The organization was not found.")
    if current.deleted_at is not None:
        raise LedgerError(ErrorCode.ALREADY_REMOVED, "The organization has already been removed.")
    return current


def organization_create(*, principal: Any = None, **data: Any) -> Organization:
    parent_id = data.pop("parent_id", None)
    if parent_id is None:
        _require_unlimited(principal)

    def create(locked: dict[uuid.UUID, Organization]) -> Organization:
        parent = _parent_for(principal, locked.get(parent_id), parent_id) if parent_id else None
        organization = apply_changes(Organization(**ACTIVE_STATUS, parent=parent), data)
        organization.path = f"{parent.path if parent else '/'}{organization.id.hex}/"
        organization.save()
        return organization

    return with_tree_lock([parent_id] if parent_id else [], create)


def organization_update(
    *, organization: Organization, principal: Any = None, data: dict[str, Any]
) -> Organization:
    """Update fields and, with ``parent_id`` in ``data``, move the organization (and its
    subtree) under another parent, all under the lock of the trees involved."""
    data = dict(data)
    moving = "parent_id" in data
    parent_id = data.pop("parent_id", None)

    def update(locked: dict[uuid.UUID, Organization]) -> Organization:
        current = _locked_current(locked, organization, principal)
        if moving:
            _organization_move(current, principal, locked.get(parent_id), parent_id)
        apply_changes(current, data)
        current.save()
        return current

    return with_tree_lock([organization.pk, parent_id], update)


def _organization_move(
    organization: Organization,
    principal: Any,
    parent_row: Organization | None,
    parent_id: uuid.UUID | None,
) -> None:
    if parent_id == organization.parent_id:
        return
    parent = _parent_for(principal, parent_row, parent_id)
    if parent is None:
        _require_unlimited(principal)
    elif organization.id.hex in parent.ancestor_ids:
        raise LedgerError(
            ErrorCode.ACTION_NOT_PERMITTED,
            "An organization cannot become a descendant of itself.",
            fields={"parentOrganizationId": "would make a cycle"},
        )
    old_path = organization.path
    new_path = f"{parent.path if parent else '/'}{organization.id.hex}/"
    Organization.objects.filter(path__startswith=old_path).update(
        path=Concat(Value(new_path), Substr("path", len(old_path) + 1))
    )
    organization.parent = parent
    organization.path = new_path


def organization_delete(*, organization: Organization, principal: Any = None) -> Organization:
    def delete(locked: dict[uuid.UUID, Organization]) -> Organization:
        current = _locked_current(locked, organization, principal)
        if current.children.filter(deleted_at__isnull=True).exists():
            raise LedgerError(
                ErrorCode.ACTION_NOT_PERMITTED,
                "The organization still has active child organizations.",
            )
        if current.ledgers.filter(deleted_at__isnull=True).exists():
            raise LedgerError(
                ErrorCode.ACTION_NOT_PERMITTED, "The organization still has active ledgers."
            )
        current.deleted_at = timezone.now()
        current.save(update_fields=["deleted_at", "updated_at"])
        return current

    return with_tree_lock([organization.pk], delete)


def _ledger_conflict(name: str) -> LedgerError:
    return LedgerError(
        ErrorCode.LEDGER_NAME_CONFLICT,
        f"A ledger named '{name}' already exists in this organization.",
        fields={"name": "already in use"},
    )


def ledger_create(*, organization: Organization, **data: Any) -> Ledger:
    """Under the tree lock, so that the organization cannot be deleted meanwhile."""

    def create(locked: dict[uuid.UUID, Organization]) -> Ledger:
        current = locked.get(organization.pk)
        if current is None or current.deleted_at is not None:
            raise LedgerError(ErrorCode.ACTION_NOT_PERMITTED, "The organization has been deleted.")
        same_name = Ledger.objects.filter(organization=current, name=data["name"])
        with unique_among_active(same_name, _ledger_conflict(data["name"])):
            ledger = apply_changes(Ledger(organization=current, **ACTIVE_STATUS), data)
            ledger.save(force_insert=True)
            return ledger

    return with_tree_lock([organization.pk], create)


def ledger_update(*, ledger: Ledger, data: dict[str, Any]) -> Ledger:
    name = data.get("name")
    same_name = (
        Ledger.objects.filter(organization_id=ledger.organization_id, name=name)
        if name is not None
        else Ledger.objects.none()
    )
    with ledger_write(ledger.pk):
        apply_changes(ledger, data)
        with unique_among_active(same_name, _ledger_conflict(str(name)), exclude=ledger.pk):
            ledger.save()
    return ledger


def ledger_delete(*, ledger: Ledger) -> Ledger:
    """Waits for the writes into the ledger to finish; none starts until this commits."""
    with transaction.atomic():
        if not lock_ledger_for_delete(ledger.pk):
            raise LedgerError(ErrorCode.ALREADY_REMOVED, "The ledger has already been removed.")
        ledger.deleted_at = timezone.now()
        ledger.save(update_fields=["deleted_at", "updated_at"])
    return ledger


def token_create(
    *,
    name: str,
    organization_ids: Iterable[uuid.UUID] = (),
    read_only: bool = False,
    expires_in_days: int | None = None,
) -> tuple[ApiToken, str]:
    """Create a token and return it with its raw secret, which is never stored."""
    secret = generate_secret()
    expires_at = None
    if expires_in_days is not None:
        expires_at = timezone.now() + dt.timedelta(days=expires_in_days)
    wanted = {uuid.UUID(str(pk)) for pk in organization_ids}
    with transaction.atomic():
        organizations = list(Organization.objects.filter(pk__in=wanted))
        missing = wanted - {o.pk for o in organizations}
        if missing:
            raise LedgerError(
                ErrorCode.NOT_FOUND, f"Unknown organization(s): {', '.join(map(str, missing))}."
            )
        token = ApiToken.objects.create(
            name=name,
            prefix=secret.prefix,
            secret_hash=secret.secret_hash,
            read_only=read_only,
            expires_at=expires_at,
        )
        token.organizations.set(organizations)
    return token, secret.raw


def token_revoke(*, name: str) -> ApiToken:
    token = ApiToken.objects.filter(name=name).first()
    if token is None:
        raise LedgerError(ErrorCode.NOT_FOUND, f"No token named '{name}'.")
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at", "updated_at"])
    return token


def ensure_ledger_active(ledger: Ledger) -> None:
    """The early, lock-free refusal of a write into a ledger already deleted when the request
    read it; the write itself checks again under ``organizations.locking``'s ledger lock."""
    if ledger.deleted_at is not None:
        raise ledger_deleted()


def _soft_delete(obj: Any) -> None:
    obj.deleted_at = timezone.now()
    obj.save(update_fields=["deleted_at", "updated_at"])


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
    with ledger_write(ledger.pk):
        return Portfolio.objects.create(
            organization_id=ledger.organization_id,
            ledger=ledger,
            name=name,
            entity_id=entity_id,
            status_code=status_code,
            status_description=status_description,
            metadata=validate_metadata(metadata or {}),
        )


def portfolio_update(*, portfolio: Portfolio, data: dict[str, Any]) -> Portfolio:
    with ledger_write(portfolio.ledger_id):
        apply_changes(portfolio, data)
        portfolio.save()
    return portfolio


def portfolio_delete(*, portfolio: Portfolio) -> Portfolio:
    with ledger_write(portfolio.ledger_id):
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
    same_name = Product.objects.filter(ledger_id=ledger.pk, name=name)
    with ledger_write(ledger.pk), unique_among_active(same_name, _product_conflict(name)):
        return Product.objects.create(
            organization_id=ledger.organization_id,
            ledger=ledger,
            name=name,
            status_code=status_code,
            status_description=status_description,
            metadata=validate_metadata(metadata or {}),
        )


def product_update(*, product: Product, data: dict[str, Any]) -> Product:
    name = data.get("name")
    same_name = (
        Product.objects.filter(ledger_id=product.ledger_id, name=name)
        if name is not None
        else Product.objects.none()
    )
    with ledger_write(product.ledger_id):
        apply_changes(product, data)
        with unique_among_active(same_name, _product_conflict(str(name)), exclude=product.pk):
            product.save()
    return product


def product_delete(*, product: Product) -> Product:
    """Accounts assigned to the product keep their productId; reads still show the product."""
    with ledger_write(product.ledger_id):
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


def _parent_account(ledger_id: Any, parent_id: uuid.UUID, asset_code: str) -> Account:
    parent = Account.objects.filter(
        pk=parent_id, ledger_id=ledger_id, deleted_at__isnull=True
    ).first()
    if parent is None or parent.asset_code != asset_code:
        raise LedgerError(
            ErrorCode.ACTION_NOT_PERMITTED,
            "parentAccountId must name an active account of this ledger with the same assetCode.",
            fields={"parentAccountId": "not an active account of this ledger and asset"},
        )
    return parent


def _account_insert(account: Account) -> Account:
    """Save a new account with its balance row (zero), inside the caller's transaction."""
    account.save(force_insert=True)
    Balance.objects.create(
        organization_id=account.organization_id,
        ledger_id=account.ledger_id,
        account=account,
        asset_code=account.asset_code,
        is_external=account.is_external,
    )
    return account


def _lock_asset_active(ledger_id: Any, asset_code: str) -> None:
    """The asset is an active instrument of the ledger. An instrument is created and deleted
    together with its ``@external/<CODE>`` account, in one database transaction, so that account
    answers for it; locking its row keeps a concurrent delete of the instrument out until the
    new account (whose balance that delete must then see) is committed."""
    external = (
        Account.objects.filter(
            ledger_id=ledger_id,
            alias=f"{Account.EXTERNAL_PREFIX}{asset_code}",
            type=Account.EXTERNAL,
            deleted_at__isnull=True,
        )
        .select_for_update()
        .first()
    )
    if external is None:
        raise LedgerError(
            ErrorCode.ASSET_CODE_NOT_FOUND,
            f"No active instrument with code '{asset_code}' in this ledger.",
            fields={"assetCode": "not an active instrument of this ledger"},
        )


def external_account_create(*, ledger: Ledger, asset_code: str) -> Account:
    """``@external/<CODE>``: the ledger's counterparty for an instrument; it may go negative.

    Called by ``instrument_create`` inside its transaction."""
    with transaction.atomic():
        return _account_insert(
            Account(
                organization_id=ledger.organization_id,
                ledger=ledger,
                name=f"External {asset_code}",
                alias=f"{Account.EXTERNAL_PREFIX}{asset_code}",
                type=Account.EXTERNAL,
                asset_code=asset_code,
            )
        )


def external_account_delete(*, ledger_id: Any, asset_code: str) -> int:
    """Soft-delete the external account of an instrument; called by ``instrument_delete``."""
    now = timezone.now()
    return Account.objects.filter(
        ledger_id=ledger_id,
        alias=f"{Account.EXTERNAL_PREFIX}{asset_code}",
        type=Account.EXTERNAL,
        deleted_at__isnull=True,
    ).update(deleted_at=now, updated_at=now)


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
) -> Account:
    if type == Account.EXTERNAL or (alias or "").startswith(Account.EXTERNAL_PREFIX):
        raise _refuse_external("they cannot be created through the API")
    if portfolio_id is not None:
        _active_portfolio(ledger.pk, portfolio_id)
    if product_id is not None:
        _active_product(ledger.pk, product_id)
    if parent_account_id is not None:
        _parent_account(ledger.pk, parent_account_id, asset_code)
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
    same_alias = Account.objects.filter(ledger_id=ledger.pk, alias=account.alias)
    with ledger_write(ledger.pk):
        _lock_asset_active(ledger.pk, asset_code)
        with unique_among_active(same_alias, _alias_conflict(account.alias)):
            _account_insert(account)
    return account


def account_update(*, account: Account, data: dict[str, Any]) -> Account:
    if account.is_external:
        raise _refuse_external("they cannot be changed")
    if data.get("portfolio_id") is not None:
        _active_portfolio(account.ledger_id, data["portfolio_id"])
    if data.get("product_id") is not None:
        _active_product(account.ledger_id, data["product_id"])
    with ledger_write(account.ledger_id):
        apply_changes(account, data)
        account.save()
    return account


def account_delete(*, account: Account) -> Account:
    """Refused while the balance holds anything; the balance row is locked while checking."""
    if account.is_external:
        raise _refuse_external("they are removed with their instrument")
    with ledger_write(account.ledger_id):
        balance = Balance.objects.select_for_update().filter(account_id=account.pk).first()
        if balance is not None and (balance.available or balance.on_hold):
            raise LedgerError(
                ErrorCode.BALANCE_REMAINING,
                "The account still holds a balance; move it out before deleting the account.",
            )
        _soft_delete(account)
    return account
