"""``Authorization: Bearer <token>`` authentication against hashed API tokens."""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from ledgerproject import actors
from organizations.models import ApiToken
from organizations.tokens import secret_matches, split_prefix
from transactions import copies


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
        kept_epoch: int | None = None  # set when the token is this process's copy
        if prefix is not None:
            from_copy = not fresh and _verifies_epoch(request)
            token, paths, kept_epoch = copies.token_of(prefix, from_copy=from_copy)
        if token is None or not secret_matches(raw, token.secret_hash):
            raise exceptions.AuthenticationFailed("The token is not valid.")
        if token.revoked_at is not None:
            raise exceptions.AuthenticationFailed("The token has been revoked.")
        if token.expires_at is not None and token.expires_at <= timezone.now():
            raise exceptions.AuthenticationFailed("The token has expired.")
        actors.act_as(actors.Actor("token", token.name, str(token.pk)))
        return TokenPrincipal(token, paths, epoch=kept_epoch, prefix=prefix), token

    def reauthenticate(self, request: Request) -> TokenPrincipal:
        """The request's token read again from the database (its kept copy was stale, or
        refused); raises as ``authenticate`` does if it is no longer valid."""
        copies.forget_token(principal_of(request).prefix or "")
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
