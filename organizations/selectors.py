"""Reads of organizations and ledgers, always through the token's reach: "missing" and "not
yours" give the same 404."""

from __future__ import annotations

import uuid
from typing import Any

from django.db import connection
from django.db.models import F, Q, QuerySet

from ledgerproject import rows
from ledgerproject.db import pg_array
from ledgerproject.errors import ErrorCode, LedgerError
from ledgerproject.rows import Select
from organizations import ledger_copies
from organizations.models import EPOCH_SQL, Account, Balance, Ledger, Organization


def not_found(what: str = "resource") -> LedgerError:
    return LedgerError(ErrorCode.NOT_FOUND, f"The {what} was not found.")


def parse_id(value: Any, what: str = "resource") -> uuid.UUID:
    try:
        return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))
    except (ValueError, TypeError, AttributeError):
        raise not_found(what) from None


def _reach(principal: Any, path_field: str = "path") -> Q:
    """The organizations a principal reaches, as a filter: any, or those under its paths."""
    reach = Q()
    if principal.is_limited:
        for path in principal.organization_paths:
            reach |= Q(**{f"{path_field}__startswith": path})
    return reach


def organizations_visible(principal: Any) -> QuerySet[Organization]:
    return Organization.objects.filter(_reach(principal))


def organization_get_for(principal: Any, organization_id: Any) -> Organization:
    """One query, the token's reach applied in it: "missing" and "not yours" run the same
    statement, both find no row, and both answer the same 404."""
    pk = parse_id(organization_id, "organization")
    organization = organizations_visible(principal).filter(pk=pk).first()
    if organization is None:
        raise not_found("organization")
    return organization


def ledger_get(organization: Organization, ledger_id: Any) -> Ledger:
    pk = parse_id(ledger_id, "ledger")
    ledger = Ledger.objects.filter(pk=pk, organization_id=organization.pk).first()
    if ledger is None:
        raise not_found("ledger")
    return ledger


# One row whatever happens: the ledger (NULLs when it is missing or out of the token's reach)
# and the authentication epoch (``AuthEpoch``), which confirms a token kept in memory.
LEDGER_WITH_ORGANIZATION_SQL = Select(
    Ledger,
    "l",
    "FROM (SELECT 1) AS one LEFT JOIN (organizations_ledger l "
    "JOIN organizations_organization o ON o.id = l.organization_id "
    "AND l.id = %s AND l.organization_id = %s AND (%s OR o.path LIKE ANY(%s::text[]))) ON true",
    extra=["o.path", EPOCH_SQL],
)


def ledger_lookup(
    principal: Any, organization_id: Any, ledger_id: Any
) -> tuple[tuple[Organization, Ledger] | None, int | None]:
    """``((organization, ledger) or None, authentication epoch)`` in one statement, the token's
    reach applied in it. On PostgreSQL a literal statement (cheaper than compiling the ORM's
    join) carrying the organization's id and path (its other fields load if something asks
    for them); elsewhere the ORM, and no epoch (nothing keeps tokens there)."""
    try:
        org_pk, ledger_pk = uuid.UUID(str(organization_id)), uuid.UUID(str(ledger_id))
    except (ValueError, TypeError, AttributeError):
        return None, None
    if connection.vendor != "postgresql":
        found = (
            Ledger.objects.select_related("organization")
            .filter(_reach(principal, "organization__path"), pk=ledger_pk, organization_id=org_pk)
            .first()
        )
        return (None if found is None else (found.organization, found)), None
    patterns = pg_array(f"{path}%" for path in principal.organization_paths)
    params = [ledger_pk, org_pk, not principal.is_limited, patterns]
    (ledger,) = LEDGER_WITH_ORGANIZATION_SQL.fetch(params)
    path, epoch = ledger.selected_extra  # type: ignore[attr-defined]
    if ledger.pk is None:
        return None, epoch
    organization = rows.loaded(Organization, ("id", "path"), (ledger.organization_id, path))
    ledger.organization = organization
    ledger_copies.keep(organization, ledger, epoch)
    return (organization, ledger), epoch


def ledger_missing(principal: Any, organization_id: Any, ledger_id: Any) -> LedgerError:
    """Which of the two is missing, asked the same way whether the ledger is missing or
    belongs to an organization the token does not reach (one more query)."""
    organization_get_for(principal, organization_id)
    parse_id(ledger_id, "ledger")
    return not_found("ledger")


def ledger_get_for(
    principal: Any, organization_id: Any, ledger_id: Any
) -> tuple[Organization, Ledger]:
    """The organization and ledger of a path in one query, the token's reach applied in it;
    a miss answers 404 (``ledger_missing``)."""
    found, _ = ledger_lookup(principal, organization_id, ledger_id)
    if found is None:
        raise ledger_missing(principal, organization_id, ledger_id)
    return found


def account_by_alias(ledger: Ledger, alias: str) -> Account:
    """The ledger's active account with this alias (a leading ``@`` may be left out)."""
    wanted = alias if alias.startswith("@") else f"@{alias}"
    account = (
        Account.objects.select_related("balance")
        .filter(
            organization_id=ledger.organization_id,
            ledger_id=ledger.pk,
            alias=wanted,
            deleted_at__isnull=True,
        )
        .first()
    )
    if account is None:
        raise not_found("account")
    return account


def balances_of(ledger: Ledger) -> QuerySet[Balance]:
    """A ledger's balances with their accounts, keyset-ordered by the account's creation (a
    balance is made with its account)."""
    return (
        Balance.objects.filter(organization_id=ledger.organization_id, ledger_id=ledger.pk)
        .select_related("account")
        .annotate(created_at=F("account__created_at"))
    )
