"""Writes for organizations, ledgers and API tokens. Each runs in one database transaction."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterable
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Value
from django.db.models.functions import Concat, Substr
from django.utils import timezone

from ledgerproject.api.errors import ApiError, ErrorCode
from organizations.models import ApiToken, Ledger, Organization
from organizations.tokens import generate_secret

ACTIVE_STATUS = {"status_code": "ACTIVE", "status_description": None}


def _apply(obj: Any, data: dict[str, Any]) -> None:
    for field, value in data.items():
        setattr(obj, field, value)


def _parent_for(principal: Any, parent_id: uuid.UUID | None) -> Organization | None:
    if parent_id is None:
        return None
    parent = Organization.objects.filter(pk=parent_id, deleted_at__isnull=True).first()
    if parent is None or (principal is not None and not principal.reaches(parent.path)):
        raise ApiError(
            ErrorCode.PARENT_ORGANIZATION_NOT_FOUND,
            f"Parent organization {parent_id} was not found.",
            fields={"parentOrganizationId": "not found"},
        )
    return parent


def _require_unlimited(principal: Any) -> None:
    if principal is not None and principal.is_limited:
        raise ApiError(
            ErrorCode.INSUFFICIENT_PRIVILEGES,
            "Only a token not limited to organizations may create or move a top-level "
            "organization.",
        )


def organization_create(*, principal: Any = None, **data: Any) -> Organization:
    parent_id = data.pop("parent_id", None)
    with transaction.atomic():
        parent = _parent_for(principal, parent_id)
        if parent is None:
            _require_unlimited(principal)
        organization = Organization(**{**ACTIVE_STATUS, **data}, parent=parent)
        organization.path = f"{parent.path if parent else '/'}{organization.id.hex}/"
        organization.save()
    return organization


def organization_update(
    *, organization: Organization, principal: Any = None, data: dict[str, Any]
) -> Organization:
    data = dict(data)
    with transaction.atomic():
        if "parent_id" in data:
            _organization_move(organization, principal, data.pop("parent_id"))
        _apply(organization, data)
        organization.save()
    return organization


def _organization_move(
    organization: Organization, principal: Any, parent_id: uuid.UUID | None
) -> None:
    if parent_id == organization.parent_id:
        return
    parent = _parent_for(principal, parent_id)
    if parent is None:
        _require_unlimited(principal)
    elif organization.id.hex in parent.ancestor_ids:
        raise ApiError(
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


def organization_delete(*, organization: Organization) -> Organization:
    with transaction.atomic():
        if organization.children.filter(deleted_at__isnull=True).exists():
            raise ApiError(
                ErrorCode.ACTION_NOT_PERMITTED,
                "The organization still has active child organizations.",
            )
        if organization.ledgers.filter(deleted_at__isnull=True).exists():
            raise ApiError(
                ErrorCode.ACTION_NOT_PERMITTED, "The organization still has active ledgers."
            )
        organization.deleted_at = timezone.now()
        organization.save(update_fields=["deleted_at", "updated_at"])
    return organization


def _ledger_name_taken(organization: Organization, name: str, exclude: Any = None) -> bool:
    queryset = Ledger.objects.filter(organization=organization, name=name, deleted_at__isnull=True)
    if exclude is not None:
        queryset = queryset.exclude(pk=exclude)
    return queryset.exists()


def _ledger_conflict(name: str) -> ApiError:
    return ApiError(
        ErrorCode.LEDGER_NAME_CONFLICT,
        f"A ledger named '{name}' already exists in this organization.",
        fields={"name": "already in use"},
    )


def ledger_create(*, organization: Organization, **data: Any) -> Ledger:
    if organization.deleted_at is not None:
        raise ApiError(ErrorCode.ACTION_NOT_PERMITTED, "The organization has been deleted.")
    if _ledger_name_taken(organization, data["name"]):
        raise _ledger_conflict(data["name"])
    try:
        with transaction.atomic():
            return Ledger.objects.create(organization=organization, **{**ACTIVE_STATUS, **data})
    except IntegrityError:
        raise _ledger_conflict(data["name"]) from None


def ledger_update(*, ledger: Ledger, data: dict[str, Any]) -> Ledger:
    name = data.get("name")
    if name is not None and _ledger_name_taken(ledger.organization, name, exclude=ledger.pk):
        raise _ledger_conflict(name)
    _apply(ledger, data)
    try:
        with transaction.atomic():
            ledger.save()
    except IntegrityError:
        raise _ledger_conflict(str(name)) from None
    return ledger


def ledger_delete(*, ledger: Ledger) -> Ledger:
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
            raise ApiError(
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
        raise ApiError(ErrorCode.NOT_FOUND, f"No token named '{name}'.")
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at", "updated_at"])
    return token
