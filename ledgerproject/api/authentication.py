"""``Authorization: Bearer <token>`` authentication against hashed API tokens."""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from organizations.models import ApiToken
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
        token = None
        if prefix is not None:
            token = ApiToken.objects.filter(prefix=prefix).prefetch_related("organizations").first()
        if token is None or not secret_matches(raw, token.secret_hash):
            raise exceptions.AuthenticationFailed("The token is not valid.")
        if token.revoked_at is not None:
            raise exceptions.AuthenticationFailed("The token has been revoked.")
        if token.expires_at is not None and token.expires_at <= timezone.now():
            raise exceptions.AuthenticationFailed("The token has expired.")
        paths = tuple(sorted(org.path for org in token.organizations.all()))
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
