"""Reads of organizations and ledgers, always through the token's reach: "missing" and "not
yours" give the same 404."""

from __future__ import annotations

import uuid
from typing import Any

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
