"""``manage.py setup_roles``: create the back office's ready-made groups (viewer, support,
accountant, approver, administrator) or set them back to their permissions
(``ledgerproject.roles``, docs/BACK-OFFICE.md#roles). Safe to run again, after every
``migrate``."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from ledgerproject.roles import ROLES, setup_roles


class Command(BaseCommand):
    help = "Create the back office's role groups, or set them back to their permissions."

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            done = setup_roles()
        except LookupError as error:
            raise CommandError(f"{error} (has migrate run?)") from error
        summaries = {role.name: role.summary for role in ROLES}
        for name, count in done:
            self.stdout.write(f"{name:<14} {count:>3} permissions  {summaries[name]}")
