"""``Authorization: Bearer <token>`` authentication against hashed API tokens."""

from __future__ import annotations

from typing import Any, NamedTuple

from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from ledgerproject import kept
from ledgerproject.kept import Kept
from ledgerproject.rows import Select
from organizations.models import EPOCH_SQL, ApiToken
from organizations.tokens import secret_matches, split_prefix


class TokenPrincipal:
    """``request.user`` for a token: authenticated, never staff, carries the token's reach."""

    is_authenticated = True
    is_anonymous = False
    is_staff = False
    is_superuser = False

    def __init__(
        self,
        token: ApiToken,
        organization_paths: tuple[str, ...],
        *,
        epoch: int | None = None,
        prefix: str | None = None,
    ) -> None:
        self.token = token
        self.read_only = token.read_only
        self.organization_paths = organization_paths
        # Set when the token came from this process's copy: the authentication epoch it was
        # read at, which the ledger statement must still find (``ScopedAPIView``).
        self.unconfirmed_epoch = epoch
        self.prefix = prefix

    @property
    def is_limited(self) -> bool:
        return bool(self.organization_paths)

    def reaches(self, organization_path: str) -> bool:
        """An unlimited token reaches everything; a limited one its organizations' subtrees."""
        if not self.organization_paths:
            return True
        return any(organization_path.startswith(p) for p in self.organization_paths)

    def __str__(self) -> str:
        return f"token:{self.token.name}"


TOKEN_SQL = Select(
    ApiToken,
    "t",
    "FROM organizations_apitoken t "
    "LEFT JOIN organizations_apitoken_organizations m ON m.apitoken_id = t.id "
    "LEFT JOIN organizations_organization o ON o.id = m.organization_id "
    "WHERE t.prefix = %s",
    extra=["o.path", EPOCH_SQL],
)


class _Entry(NamedTuple):
    token: ApiToken
    paths: tuple[str, ...]
    epoch: int


# Tokens kept in this process (PostgreSQL only, ``ledgerproject.kept``), by prefix, with the
# authentication epoch (``organizations.models.AuthEpoch``) they were read at. Used only by
# views that read the epoch again in their ledger statement (``ScopedAPIView``) before doing
# anything: a token revoked or changed in any process fails or changes on its next request
# everywhere.
kept_tokens: Kept[str, _Entry] = Kept(4096)


def token_lookup(prefix: str) -> tuple[ApiToken | None, tuple[str, ...], int | None]:
    """The token with this prefix, the paths of its organizations and the authentication
    epoch, read in one statement (a literal one: the ORM's query compilation cost more than
    the query). The token is kept only on PostgreSQL, where triggers move the epoch."""
    rows = TOKEN_SQL.fetch([prefix])
    if not rows:
        return None, (), None
    paths = tuple(sorted(p for row in rows if (p := row.selected_extra[0]) is not None))  # type: ignore[attr-defined]
    epoch = rows[0].selected_extra[1]  # type: ignore[attr-defined]
    # The epoch's row is there (a test flush empties it) and triggers move it: keep the copy.
    if epoch is not None and kept.in_use():
        kept_tokens.put(prefix, _Entry(rows[0], paths, epoch))
    return rows[0], paths, epoch


def forget_token(prefix: str) -> None:
    kept_tokens.forget(prefix)


class BearerTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(
        self, request: Request, *, fresh: bool = False
    ) -> tuple[TokenPrincipal, ApiToken] | None:
        header = request.META.get("HTTP_AUTHORIZATION", "")
        if not header:
            return None
        scheme, _, raw = header.partition(" ")
        raw = raw.strip()
        if scheme.lower() != "bearer" or not raw:
            raise exceptions.AuthenticationFailed(
                "The Authorization header must be 'Bearer <token>'."
            )
        prefix = split_prefix(raw)
        token: ApiToken | None = None
        paths: tuple[str, ...] = ()
        cached_epoch: int | None = None  # set when the token is this process's copy
        use_copy = not fresh and _verifies_epoch(request)
        entry = kept_tokens.get(prefix) if prefix and use_copy else None
        if entry is not None:
            token, paths, cached_epoch = entry
        elif prefix is not None:
            token, paths, _ = token_lookup(prefix)
        if token is None or not secret_matches(raw, token.secret_hash):
            raise exceptions.AuthenticationFailed("The token is not valid.")
        if token.revoked_at is not None:
            raise exceptions.AuthenticationFailed("The token has been revoked.")
        if token.expires_at is not None and token.expires_at <= timezone.now():
            raise exceptions.AuthenticationFailed("The token has expired.")
        return TokenPrincipal(token, paths, epoch=cached_epoch, prefix=prefix), token

    def reauthenticate(self, request: Request) -> TokenPrincipal:
        """The request's token read again from the database (its kept copy was stale, or
        refused); raises as ``authenticate`` does if it is no longer valid."""
        forget_token(principal_of(request).prefix or "")
        # From the database even if another thread has kept a copy again meanwhile (one it may
        # have read before the change that sent this request here).
        result = self.authenticate(request, fresh=True)
        if result is None:
            raise exceptions.NotAuthenticated()
        request.user, request.auth = result  # type: ignore[assignment]
        return result[0]

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="api"'


class BearerTokenScheme(OpenApiAuthenticationExtension):
    target_class = BearerTokenAuthentication
    name = "bearerAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "An API token from create_token.",
        }


def principal_of(request: Any) -> TokenPrincipal:
    user = request.user
    if not isinstance(user, TokenPrincipal):
        raise exceptions.NotAuthenticated()
    return user


def _verifies_epoch(request: Request) -> bool:
    """Whether the view reads the authentication epoch again before doing anything (a view
    under a ledger: ``ScopedAPIView`` confirms it in the ledger statement). Every other view
    reads the token from the database."""
    context = getattr(request, "parser_context", None) or {}
    view = context.get("view")
    return bool(getattr(view, "confirms_token_epoch", False)) and "ledger_id" in context.get(
        "kwargs", {}
    )
