"""``Authorization: Bearer <token>`` authentication against hashed API tokens."""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.db.models.signals import m2m_changed, post_delete, post_save
from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from ledgerproject.rows import Select
from organizations.models import ApiToken, Organization
from organizations.tokens import secret_matches, split_prefix


class TokenPrincipal:
    """``request.user`` for a token: authenticated, never staff, carries the token's reach."""

    is_authenticated = True
    is_anonymous = False
    is_staff = False
    is_superuser = False

    def __init__(self, token: ApiToken, organization_paths: tuple[str, ...]) -> None:
        self.token = token
        self.read_only = token.read_only
        self.organization_paths = organization_paths

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
    extra=["o.path"],
)
_token_cache: dict[str, tuple[float, ApiToken | None, tuple[str, ...]]] = {}


def token_lookup(prefix: str) -> tuple[ApiToken | None, tuple[str, ...]]:
    """The token with this prefix and the paths of its organizations, in one query (a literal
    statement: the ORM's query compilation cost more than the query).

    With ``API_TOKEN_CACHE_SECONDS`` > 0 the answer is kept that long in this process (a
    revocation made in another process then takes up to that long to apply here; any change
    to a token or an organization made in this process clears the cache). Off by default."""
    ttl = getattr(settings, "API_TOKEN_CACHE_SECONDS", 0)
    now = time.monotonic()
    if ttl > 0:
        cached = _token_cache.get(prefix)
        if cached is not None and now - cached[0] < ttl:
            return cached[1], cached[2]
    rows = TOKEN_SQL.fetch([prefix])
    token = rows[0] if rows else None
    paths = tuple(sorted(p for row in rows if (p := row._extra[0]) is not None))  # type: ignore[attr-defined]
    if ttl > 0 and token is not None:  # unknown prefixes are not kept: no unbounded growth
        _token_cache[prefix] = (now, token, paths)
    return token, paths


def clear_token_cache(**_: Any) -> None:
    _token_cache.clear()


for _signal in (post_save, post_delete):
    _signal.connect(clear_token_cache, sender=ApiToken, dispatch_uid=f"token-cache-{_signal}")
    _signal.connect(clear_token_cache, sender=Organization, dispatch_uid=f"org-cache-{_signal}")
m2m_changed.connect(
    clear_token_cache, sender=ApiToken.organizations.through, dispatch_uid="token-orgs-cache"
)


class BearerTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[TokenPrincipal, ApiToken] | None:
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
        token, paths = token_lookup(prefix) if prefix is not None else (None, ())
        if token is None or not secret_matches(raw, token.secret_hash):
            raise exceptions.AuthenticationFailed("The token is not valid.")
        if token.revoked_at is not None:
            raise exceptions.AuthenticationFailed("The token has been revoked.")
        if token.expires_at is not None and token.expires_at <= timezone.now():
            raise exceptions.AuthenticationFailed("The token has expired.")
        return TokenPrincipal(token, paths), token

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
