"""Reads of organizations and ledgers, always through the token's reach: "missing" and "not
yours" give the same 404."""

from __future__ import annotations

import uuid
from typing import Any

from django.db import DEFAULT_DB_ALIAS
from django.db.models import F, Q, QuerySet

from ledgerproject.errors import ErrorCode, LedgerError
from ledgerproject.rows import Select
from organizations.models import EPOCH_SQL, Account, ApiToken, Balance, Ledger, Organization


def external_account_of(organization_id: Any, ledger_id: Any, asset_code: str) -> Any:
    """The active ``@external/<CODE>`` account of an instrument, which answers for it."""
    return Account.objects.filter(
        organization_id=organization_id,
        ledger_id=ledger_id,
        alias=f"{Account.EXTERNAL_PREFIX}{asset_code}",
        type=Account.EXTERNAL,
        deleted_at__isnull=True,
    )


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


# The ledger, its organization's path and the authentication epoch, in one row even when there
# is no such ledger (the epoch is still read); the token's reach applied inside (a limited
# token reaches the subtrees of its organizations: a path that begins with one of theirs).
# The same statement on both databases. Parameters: the ledger, the organization, whether the
# token is unlimited, the token.
LEDGER_WITH_ORGANIZATION_SQL = Select(
    Ledger,
    "l",
    "FROM (SELECT 1) AS one LEFT JOIN (organizations_ledger l "
    "JOIN organizations_organization o ON o.id = l.organization_id "
    "AND l.id = %s AND l.organization_id = %s AND (%s OR EXISTS (SELECT 1 "
    "FROM organizations_apitoken_organizations m "
    "JOIN organizations_organization r ON r.id = m.organization_id "
    "WHERE m.apitoken_id = %s AND substr(o.path, 1, length(r.path)) = r.path))) ON true",
    extra=["o.path", EPOCH_SQL],
)


def ledger_lookup(
    principal: Any, organization_id: Any, ledger_id: Any
) -> tuple[tuple[Organization, Ledger] | None, int | None]:
    """``((organization, ledger) or None, authentication epoch)`` in one statement, the token's
    reach applied in it (``LEDGER_WITH_ORGANIZATION_SQL``). The organization carries its id
    and path (its other fields load if something asks for them)."""
    try:
        org_pk, ledger_pk = uuid.UUID(str(organization_id)), uuid.UUID(str(ledger_id))
    except (ValueError, TypeError, AttributeError):
        return None, None
    params = [ledger_pk, org_pk, not principal.is_limited, principal.token.pk]
    (ledger,) = LEDGER_WITH_ORGANIZATION_SQL.fetch(params)
    path, epoch = ledger.selected_extra  # type: ignore[attr-defined]
    if ledger.pk is None:
        return None, epoch
    organization = Organization.from_db(
        DEFAULT_DB_ALIAS, ("id", "path"), (ledger.organization_id, path)
    )
    ledger.organization = organization
    return (organization, ledger), epoch


TOKEN_SQL = Select(
    ApiToken,
    "t",
    "FROM organizations_apitoken t "
    "LEFT JOIN organizations_apitoken_organizations m ON m.apitoken_id = t.id "
    "LEFT JOIN organizations_organization o ON o.id = m.organization_id "
    "WHERE t.prefix = %s",
    extra=["o.path", EPOCH_SQL],
)


def token_lookup(prefix: str) -> tuple[ApiToken | None, tuple[str, ...], int | None]:
    """The token with this prefix, the paths of its organizations and the authentication
    epoch, read in one statement."""
    rows = TOKEN_SQL.fetch([prefix])
    if not rows:
        return None, (), None
    paths = tuple(sorted(p for row in rows if (p := row.selected_extra[0]) is not None))  # type: ignore[attr-defined]
    return rows[0], paths, rows[0].selected_extra[1]  # type: ignore[attr-defined]


def ledger_missing(principal: Any, organization_id: Any, ledger_id: Any) -> LedgerError:
    """Which of the two is missing, asked the same way whether the ledger is missing or
    belongs to an organization the token does not reach (one more query)."""
    organization_get_for(principal, organization_id)
    parse_id(ledger_id, "ledger")
    return not_found("ledger")


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
