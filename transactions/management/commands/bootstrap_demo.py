"""``manage.py bootstrap_demo``: demo data for ``make run``. Safe to run again: it finds what it
made before, and keeps the demo token. With ``LEDGER_DEMO_TOKEN`` set (``make run`` writes one
into ``.env``) the demo token is that value, shown at every run; without it the token made at
the first run is kept (only its hash is stored, so it cannot be shown again) and the command
says how to make another.

The demo ledger holds the BRL instrument, accounts ``@alice`` (funded with 1,000.00 BRL),
``@bob`` and ``@fees/platform``, and the FUND and PAYMENT_WITH_FEE templates."""

from __future__ import annotations

import json
import os
import secrets
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction
from django.utils import timezone

from instruments.selectors import instrument_codes_missing
from instruments.services import instrument_create
from ledgerproject.roles import setup_roles
from organizations.contents import account_create
from organizations.models import Account, ApiToken, Ledger, Organization
from organizations.services import ledger_create, organization_create, token_create
from organizations.tokens import secret_from_raw, secret_matches
from templates_dsl.compile import compile_template
from templates_dsl.examples import examples
from templates_dsl.selectors import templates_active
from templates_dsl.services import template_create
from transactions import engine
from transactions.models import Transaction

DEMO_DOCUMENT = "DEMO-0001"
DEMO_TOKEN = "demo"
DEMO_STAFF = "admin"
# The examples the demo ledger gets (``templates_dsl/examples``): those its accounts can use.
DEMO_TEMPLATES = ("fund", "payment_with_fee")


class Command(BaseCommand):
    help = "Create (or find) a demo organization, ledger, API token and staff user and print them."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--base-url", default="http://127.0.0.1:8000")

    def handle(self, *args: Any, **options: Any) -> None:
        base = options["base_url"].rstrip("/")
        organization = Organization.objects.filter(
            legal_document=DEMO_DOCUMENT, deleted_at__isnull=True
        ).first() or organization_create(
            legal_name="Demo Organization", legal_document=DEMO_DOCUMENT
        )
        ledger = Ledger.objects.filter(
            organization=organization, name="Demo Ledger", deleted_at__isnull=True
        ).first() or ledger_create(organization=organization, name="Demo Ledger")
        self.fill_ledger(ledger)
        raw = self.ensure_token()
        password = self.ensure_staff()
        setup_roles()
        ledger_url = f"{base}/v1/organizations/{organization.pk}/ledgers/{ledger.pk}"
        lines = [
            "",
            "Demo ready.",
            f"  API base URL:  {base}/v1",
            f"  API docs:      {base}/v1/docs/",
            f"  Admin:         {base}/admin/",
            f"  Organization:  {organization.pk}",
            f"  Ledger:        {ledger.pk}",
            f"  API token:     {raw or 'unchanged (shown at the first run)'}",
        ]
        if not raw:
            lines.append("                 a new one: .venv/bin/python manage.py create_token NAME")
            raw = "<token>"
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

    def ensure_token(self) -> str | None:
        """The demo token's raw value, or None when it was made earlier and cannot be shown."""
        wanted = secret_from_raw(os.environ.get("LEDGER_DEMO_TOKEN", "").strip())
        now = timezone.now()
        with transaction.atomic():
            token = ApiToken.objects.select_for_update().filter(name=DEMO_TOKEN).first()
            usable = token is not None and token.revoked_at is None
            if token is not None and token.expires_at is not None and token.expires_at <= now:
                usable = False
            if wanted is not None:
                if token is not None and usable and secret_matches(wanted.raw, token.secret_hash):
                    return wanted.raw
                ApiToken.objects.filter(name=DEMO_TOKEN).delete()
                return token_create(name=DEMO_TOKEN, secret=wanted)[1]
            if usable:
                return None
            ApiToken.objects.filter(name=DEMO_TOKEN).delete()
            return token_create(name=DEMO_TOKEN)[1]

    def fill_ledger(self, ledger: Ledger) -> None:
        if instrument_codes_missing(ledger_id=ledger.pk, codes=["BRL"]):
            instrument_create(ledger=ledger, name="Brazilian real", type="currency", code="BRL")
        for alias in ("@alice", "@bob", "@fees/platform"):
            if not Account.objects.filter(ledger=ledger, alias=alias, deleted_at__isnull=True):
                account_create(ledger=ledger, asset_code="BRL", alias=alias, name=alias[1:])
        for name in DEMO_TEMPLATES:
            text = examples()[name]
            if not templates_active(ledger).filter(code=compile_template(text).code).exists():
                template_create(ledger=ledger, text=text)
        if not Transaction.objects.filter(ledger=ledger).exists():
            engine.post(
                ledger,
                engine.PostingRequest(
                    template_code="FUND", variables={"amount": 100_000, "account": "@alice"}
                ),
            )

    def demo_examples(self, ledger_url: str, raw: str) -> list[str]:
        payment = json.dumps(
            {
                "transactionTypeCode": "PAYMENT_WITH_FEE",
                "variables": {
                    "amount": 2500,
                    "fee": 100,
                    "source": "@alice",
                    "destination": "@bob",
                },
            }
        )
        auth = f"-H 'Authorization: Bearer {raw}'"
        return [
            "",
            "Pay 25.00 BRL from @alice to @bob with a 1.00 fee:",
            f"  curl -s -X POST {auth} -H 'Content-Type: application/json' \\",
            f"    -d '{payment}' {ledger_url}/transactions",
            "See the balances:",
            f"  curl -s {auth} '{ledger_url}/accounts'",
        ]

    def ensure_staff(self) -> str | None:
        user_model = get_user_model()
        if user_model.objects.filter(username=DEMO_STAFF).exists():
            return None
        password = secrets.token_urlsafe(12)
        user_model.objects.create_superuser(DEMO_STAFF, "admin@example.com", password)
        return password
