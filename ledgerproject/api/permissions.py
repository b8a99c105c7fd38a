"""Token permissions: authenticated, and read-only tokens may not write."""

from __future__ import annotations

from typing import Any

from rest_framework import permissions
from rest_framework.request import Request

from ledgerproject.api.authentication import TokenPrincipal


def is_dry_run(request: Request) -> bool:
    return request.query_params.get("dryRun", "").lower() in {"true", "1"}


def is_read(request: Request, view: Any) -> bool:
    """GET, HEAD and OPTIONS read; so do a POST to a view that only computes (charts,
    ``read_only_post``) and a dry run where the view supports one (``dry_run_is_read``)."""
    if request.method in permissions.SAFE_METHODS:
        return True
    if request.method != "POST":
        return False
    if getattr(view, "read_only_post", False):
        return True
    return bool(getattr(view, "dry_run_is_read", False)) and is_dry_run(request)


class TokenPermission(permissions.BasePermission):
    message = "This token is read-only."

    def has_permission(self, request: Request, view: Any) -> bool:
        user = request.user
        if not isinstance(user, TokenPrincipal):
            from rest_framework.exceptions import NotAuthenticated

            raise NotAuthenticated()
        return not user.read_only or is_read(request, view)
