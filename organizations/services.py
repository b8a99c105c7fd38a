"""Writes for organizations (the tree), ledgers and API tokens. Each runs in one database
transaction. What a ledger holds (portfolios, products, accounts) is in ``contents``."""

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
from organizations import periods
from organizations.locking import (
    ledger_deleted,
    ledger_write,
    lock_ledger_against_writes,
    with_tree_lock,
)
from organizations.models import (
    ApiToken,
    Ledger,
    Organization,
)
from organizations.tokens import NewSecret, generate_secret
from outbox import events

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
        events.record(organization, events.CREATED)
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
        events.record(current, events.UPDATED)
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
        events.record(current, events.DELETED)
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
            ledger = Ledger(organization=current, **ACTIVE_STATUS)
            opens_at = periods.closing(ledger, data, may_reopen=True)
            apply_changes(ledger, {**data, "period_opens_at": opens_at})
            ledger.save(force_insert=True)
            events.record(ledger, events.CREATED)
            return ledger

    return with_tree_lock([organization.pk], create)


def ledger_update(*, ledger: Ledger, data: dict[str, Any], may_reopen: bool = False) -> Ledger:
    """``may_reopen``: the caller may move the closed period back (``periods.closing``)."""
    name = data.get("name")
    same_name = (
        Ledger.objects.filter(organization_id=ledger.organization_id, name=name)
        if name is not None
        else Ledger.objects.none()
    )
    # Changing the period waits for the writes in flight and keeps new ones out until it
    # commits; then they check against the new period (organizations.periods). Its lock is
    # the transaction's first on the ledger: one taken after a shared one could deadlock.
    period = "closed_through" in data or "time_zone" in data
    with ledger_write(ledger, exclusive=period):
        if period:
            ledger.refresh_from_db(fields=["closed_through", "time_zone", "period_opens_at"])
            opens_at = periods.closing(ledger, data, may_reopen=may_reopen)
            data = {**data, "period_opens_at": opens_at}
        apply_changes(ledger, data)
        with unique_among_active(same_name, _ledger_conflict(str(name)), exclude=ledger.pk):
            ledger.save()
        events.record(ledger, events.UPDATED)
    return ledger


def ledger_delete(*, ledger: Ledger) -> Ledger:
    """Waits for the writes into the ledger to finish; none starts until this commits."""
    with transaction.atomic():
        if not lock_ledger_against_writes(ledger):
            raise LedgerError(ErrorCode.ALREADY_REMOVED, "The ledger has already been removed.")
        ledger.deleted_at = timezone.now()
        ledger.save(update_fields=["deleted_at", "updated_at"])
        events.record(ledger, events.DELETED)
    return ledger


def token_create(
    *,
    name: str,
    organization_ids: Iterable[uuid.UUID] = (),
    read_only: bool = False,
    expires_in_days: int | None = None,
    secret: NewSecret | None = None,
) -> tuple[ApiToken, str]:
    """Create a token and return it with its raw secret, which is never stored. ``secret`` is
    for a token whose raw value is kept elsewhere (the demo token of a checkout's ``.env``)."""
    secret = secret or generate_secret()
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
