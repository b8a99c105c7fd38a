"""``manage.py bootstrap_demo``: demo data for ``make run``. Safe to run again: it finds what it
made before, and only the demo token is replaced (a raw token cannot be shown twice)."""

from __future__ import annotations

import secrets
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction

from organizations.models import ApiToken, Ledger, Organization
from organizations.services import ledger_create, organization_create, token_create

DEMO_DOCUMENT = "DEMO-0001"
DEMO_TOKEN = "demo"
DEMO_STAFF = "admin"


class Command(BaseCommand):
    help = "Create (or find) a demo organization, ledger, API token and staff user and print them."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--base-url", default="http://127.0.0.1:8000")

    def handle(self, *args: Any, **options: Any) -> None:
        base = options["base_url"].rstrip("/")
        with transaction.atomic():
            organization = Organization.objects.filter(
                legal_document=DEMO_DOCUMENT, deleted_at__isnull=True
            ).first() or organization_create(
                legal_name="Demo Organization", legal_document=DEMO_DOCUMENT
            )
            ledger = Ledger.objects.filter(
                organization=organization, name="Demo Ledger", deleted_at__isnull=True
            ).first() or ledger_create(organization=organization, name="Demo Ledger")
            self.extend_demo(organization, ledger)
            ApiToken.objects.filter(name=DEMO_TOKEN).delete()
            _, raw = token_create(name=DEMO_TOKEN)
            password = self.ensure_staff()
        ledger_url = f"{base}/v1/organizations/{organization.pk}/ledgers/{ledger.pk}"
        lines = [
            "",
            "Demo ready.",
            f"  API base URL:  {base}/v1",
            f"  API docs:      {base}/v1/docs/",
            f"  Admin:         {base}/admin/",
            f"  Organization:  {organization.pk}",
            f"  Ledger:        {ledger.pk}",
            f"  API token:     {raw}",
        ]
        if password:
            lines.append(f"  Staff login:   {DEMO_STAFF} / {password}  (shown once)")
        else:
            lines.append(
                f"  Staff login:   {DEMO_STAFF} (password shown at first run; "
                f"reset with: .venv/bin/python manage.py changepassword {DEMO_STAFF})"
            )
        lines += ["", "Try:", f"  curl -s -H 'Authorization: Bearer {raw}' {ledger_url}"]
        lines += self.demo_examples(ledger_url, raw)
        self.stdout.write("\n".join(lines) + "\n")

    def extend_demo(self, organization: Organization, ledger: Ledger) -> None:
        """Hook for the ledger contents of the demo (instruments, accounts, templates)."""

    def demo_examples(self, ledger_url: str, raw: str) -> list[str]:
        return []

    def ensure_staff(self) -> str | None:
        user_model = get_user_model()
        if user_model.objects.filter(username=DEMO_STAFF).exists():
            return None
        password = secrets.token_urlsafe(12)
        user_model.objects.create_superuser(DEMO_STAFF, "admin@example.com", password)
        return password
