"""Reads of organizations and ledgers, always through the token's reach: "missing" and "not
yours" give the same 404."""

from __future__ import annotations

import uuid
from typing import Any

from django.db import connection
from django.db.models import Q, QuerySet

from ledgerproject.api.errors import ApiError, ErrorCode
from organizations.models import Ledger, Organization


def not_found(what: str = "resource") -> ApiError:
    return ApiError(ErrorCode.NOT_FOUND, f"The {what} was not found.")


def parse_id(value: Any, what: str = "resource") -> uuid.UUID:
    try:
        return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))
    except (ValueError, TypeError, AttributeError):
        raise not_found(what) from None


def organizations_visible(principal: Any) -> QuerySet[Organization]:
    queryset = Organization.objects.all()
    if principal.is_limited:
        reach = Q()
        for path in principal.organization_paths:
            reach |= Q(path__startswith=path)
        queryset = queryset.filter(reach)
    return queryset


def organization_get_for(principal: Any, organization_id: Any) -> Organization:
    pk = parse_id(organization_id, "organization")
    organization = Organization.objects.filter(pk=pk).first()
    if organization is None or not principal.reaches(organization.path):
        raise not_found("organization")
    return organization


def ledger_get(organization: Organization, ledger_id: Any) -> Ledger:
    pk = parse_id(ledger_id, "ledger")
    ledger = Ledger.objects.filter(pk=pk, organization_id=organization.pk).first()
    if ledger is None:
        raise not_found("ledger")
    return ledger


LEDGER_SQL = "SELECT * FROM organizations_ledger WHERE id = %s AND organization_id = %s"
ORGANIZATION_SQL = "SELECT * FROM organizations_organization WHERE id = %s"


def _ledger_with_organization(org_pk: Any, ledger_pk: uuid.UUID) -> Ledger | None:
    """On PostgreSQL two literal statements, cheaper than compiling one ORM join."""
    if connection.vendor != "postgresql":
        return (
            Ledger.objects.select_related("organization")
            .filter(pk=ledger_pk, organization_id=org_pk)
            .first()
        )
    ledger = next(iter(Ledger.objects.raw(LEDGER_SQL, [ledger_pk, org_pk])), None)
    if ledger is not None:
        ledger.organization = next(iter(Organization.objects.raw(ORGANIZATION_SQL, [org_pk])))
    return ledger


def ledger_get_for(
    principal: Any, organization_id: Any, ledger_id: Any
) -> tuple[Organization, Ledger]:
    """The organization and ledger of a path in one query; any miss goes through
    ``organization_get_for`` and ``ledger_get`` so that it answers exactly as they do."""
    try:
        org_pk, ledger_pk = uuid.UUID(str(organization_id)), uuid.UUID(str(ledger_id))
    except (ValueError, TypeError, AttributeError):
        org_pk = ledger_pk = None
    if ledger_pk is not None:
        ledger = _ledger_with_organization(org_pk, ledger_pk)
        if ledger is not None and principal.reaches(ledger.organization.path):
            return ledger.organization, ledger
    organization = organization_get_for(principal, organization_id)
    return organization, ledger_get(organization, ledger_id)
