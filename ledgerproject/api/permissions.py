"""Token permissions: authenticated, and read-only tokens may not write."""

from __future__ import annotations

from typing import Any

from rest_framework import permissions
from rest_framework.request import Request

from ledgerproject.api.authentication import TokenPrincipal


class TokenPermission(permissions.BasePermission):
    message = "This token is read-only."

    def has_permission(self, request: Request, view: Any) -> bool:
        user = request.user
        if not isinstance(user, TokenPrincipal):
            from rest_framework.exceptions import NotAuthenticated

            raise NotAuthenticated()
        if request.method in permissions.SAFE_METHODS:
            return True
        if getattr(view, "read_only_post", False) and request.method == "POST":
            return True
        return not user.read_only
