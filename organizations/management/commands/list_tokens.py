"""``manage.py list_tokens``: names, prefixes, reach and state; never secrets."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand
from django.utils import timezone

from organizations.models import ApiToken


class Command(BaseCommand):
    help = "List API tokens (name, public prefix, organizations, read-only, expiry, state)."

    def handle(self, *args: Any, **options: Any) -> None:
        now = timezone.now()
        rows = [("NAME", "PREFIX", "ACCESS", "ORGANIZATIONS", "EXPIRES", "STATE")]
        for token in ApiToken.objects.prefetch_related("organizations").order_by("name"):
            if token.revoked_at:
                state = "revoked"
            elif token.expires_at and token.expires_at <= now:
                state = "expired"
            else:
                state = "active"
            orgs = ",".join(str(o.pk) for o in token.organizations.all()) or "all"
            rows.append(
                (
                    token.name,
                    token.prefix,
                    "read-only" if token.read_only else "read-write",
                    orgs,
                    token.expires_at.strftime("%Y-%m-%d %H:%M") if token.expires_at else "never",
                    state,
                )
            )
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        for row in rows:
            self.stdout.write(
                "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
            )
