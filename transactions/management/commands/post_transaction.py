"""``manage.py post_transaction --organization ID --ledger ID --template CODE --var name=value
... [--pending] [--idempotency-key K]``: post through the posting service and print the
transaction exactly as the API renders it."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from rest_framework.renderers import JSONRenderer

from ledgerproject.cli import add_ledger_arguments, api_error, ledger_from_options
from ledgerproject.errors import LedgerError
from ledgerproject.formats import digits_to_int, parse_timestamp
from transactions import answers, engine, idempotency


def pair(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise CommandError(f"Expected name=value, not {text!r}.")
    return name, value


def variable_value(value: str) -> int | str:
    """Digits are an amount (as a JSON integer would be); anything else an alias."""
    number = digits_to_int(value, max_digits=19)
    return value if number is None else number


class Command(BaseCommand):
    help = (
        "Post a transaction from a template, through the same service as the API, and print "
        "it as the API's JSON. --var name=value gives each template variable (amounts in "
        "minor units, accounts as @alias). --idempotency-key behaves like the API's header: "
        "a repeat with the same request prints the first transaction again and posts nothing; "
        "the same key with another request fails. Exits 1 with the API's error code when the "
        "posting is refused."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        add_ledger_arguments(parser)
        parser.add_argument("--template", required=True, help="The template's code.")
        parser.add_argument(
            "--var",
            action="append",
            default=[],
            metavar="NAME=VALUE",
            help="A template variable (repeat for each; a later one wins): amount=2500, "
            "source=@alice.",
        )
        parser.add_argument(
            "--pending", action="store_true", help="Hold the funds until commit (PRE_APPROVED)."
        )
        parser.add_argument("--description", help="Overrides the template's description.")
        parser.add_argument(
            "--effective-at",
            metavar="TIMESTAMP",
            help="When the money moved (ISO 8601, not in the future); by default, now.",
        )
        parser.add_argument(
            "--metadata",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="Metadata merged over the template's (repeatable; values are strings).",
        )
        parser.add_argument("--idempotency-key", help="At most 255 characters, as in the API.")
        parser.add_argument(
            "--dry-run", action="store_true", help="Run every check; print what would be written."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        ledger = ledger_from_options(options, writable=True)
        variables = {
            name.removeprefix("$"): variable_value(value)
            for name, value in map(pair, options["var"])
        }
        body: dict[str, Any] = {"transactionTypeCode": options["template"], "variables": variables}
        if options["pending"]:
            body["pending"] = True
        if options["description"] is not None:
            body["description"] = options["description"]
        if options["metadata"]:
            body["metadata"] = dict(map(pair, options["metadata"]))
        if options["effective_at"] is not None:
            body["effectiveAt"] = options["effective_at"]
        try:
            effective_at = None
            if options["effective_at"] is not None:
                effective_at = parse_timestamp(options["effective_at"], field="effectiveAt")
            request = engine.PostingRequest(
                template_code=options["template"],
                variables=variables,
                metadata=body.get("metadata"),
                description=options["description"],
                pending=True if options["pending"] else None,
                effective_at=effective_at,
            )
            if options["dry_run"]:
                data, replayed = answers.dry_run(ledger, request), False
            else:
                key = options["idempotency_key"]
                request.claim = idempotency.claim_for(key=key, seconds=None, body=body)
                _, data, replayed = answers.posting(engine.post(ledger, request))
        except LedgerError as exc:
            raise api_error(exc) from exc
        if replayed:
            self.stderr.write(
                f"Replayed: the idempotency key {options['idempotency_key']!r} was already "
                "used; nothing posted."
            )
        self.stdout.write(JSONRenderer().render(data).decode())
        if options["dry_run"]:
            self.stderr.write("Dry run: every check passed; nothing was written.")
