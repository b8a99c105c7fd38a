"""``manage.py create_token NAME [--organization UUID]... [--read-only] [--expires-in-days N]``."""

from __future__ import annotations

import uuid
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ledgerproject.errors import LedgerError
from organizations.models import ApiToken
from organizations.services import token_create


class Command(BaseCommand):
    help = (
        "Create an API token and print the raw token alone on the last line. The token is "
        "stored only as a hash: it cannot be shown again."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="A unique name for the token.")
        parser.add_argument(
            "--organization",
            action="append",
            default=[],
            type=uuid.UUID,
            metavar="UUID",
            help="Limit the token to this organization and its descendants (repeatable).",
        )
        parser.add_argument("--read-only", action="store_true", help="Refuse every write.")
        parser.add_argument(
            "--expires-in-days", type=int, default=None, metavar="N", help="Expire after N days."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        name = options["name"]
        if ApiToken.objects.filter(name=name).exists():
            raise CommandError(f"A token named '{name}' already exists.")
        days = options["expires_in_days"]
        if days is not None and days <= 0:
            raise CommandError("--expires-in-days must be a positive number of days.")
        try:
            token, raw = token_create(
                name=name,
                organization_ids=options["organization"],
                read_only=options["read_only"],
                expires_in_days=days,
            )
        except LedgerError as exc:
            raise CommandError(exc.description) from exc
        scope = ", ".join(str(o) for o in options["organization"]) or "all organizations"
        self.stderr.write(
            f"Created token '{token.name}' ({'read-only' if token.read_only else 'read-write'}, "
            f"{scope}, expires {token.expires_at or 'never'}). Store it now; it is not kept."
        )
        self.stdout.write(raw)
