"""``manage.py revoke_token NAME``: the token stops working at once."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ledgerproject.errors import LedgerError
from organizations.models import ApiToken
from organizations.services import token_revoke


class Command(BaseCommand):
    help = "Revoke an API token by name. Requests with it then answer 401 0042."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")

    def handle(self, *args: Any, **options: Any) -> None:
        before = ApiToken.objects.filter(name=options["name"]).values_list("revoked_at").first()
        try:
            token = token_revoke(name=options["name"])
        except LedgerError as exc:
            raise CommandError(exc.description) from exc
        if before is not None and before[0] is not None:
            when = before[0].strftime("%Y-%m-%d %H:%M:%S UTC")
            self.stdout.write(f"Token '{token.name}' was already revoked (at {when}); unchanged.")
            return
        self.stdout.write(f"Revoked token '{token.name}'.")
