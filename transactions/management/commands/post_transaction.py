"""``manage.py post_transaction --organization ID --ledger ID --template CODE --var name=value
... [--pending] [--idempotency-key K] [--scheduled-for T]``: post through the posting service
(or keep it to be posted at ``T``) and print the transaction (or the scheduled posting) exactly
as the API renders it."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from rest_framework.renderers import JSONRenderer

from ledgerproject.cli import add_ledger_arguments, api_error, ledger_from_options
from ledgerproject.errors import LedgerError
from ledgerproject.formats import digits_to_int, parse_timestamp
from transactions import answers, engine, idempotency, scheduling


def pair(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise CommandError(f"Expected name=value, not {text!r}.")
    return name, value


def variable_value(value: str) -> int | str:
    """Digits are an amount (as a JSON integer would be); anything else an alias."""
    number = digits_to_int(value, max_digits=19)
    return value if number is None else number


# The options that are times, and the API's names of them (what an idempotency key hashes).
TIMES = (
    ("effective_at", "effectiveAt"),
    ("commit_at", "commitAt"),
    ("scheduled_for", "scheduledFor"),
)


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
            "--commit-at",
            metavar="TIMESTAMP",
            help="With --pending: the hold commits itself then (ISO 8601, in the future).",
        )
        parser.add_argument(
            "--scheduled-for",
            metavar="TIMESTAMP",
            help="Post it then (ISO 8601, in the future) instead of now: prints the scheduled "
            "posting, which post_scheduled posts when it is due.",
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
        for option, name in TIMES:
            if options[option] is not None:
                body[name] = options[option]
        try:
            times = {
                option: parse_timestamp(body[name], field=name)
                for option, name in TIMES
                if name in body
            }
            if options["dry_run"] and "scheduled_for" in times:
                raise CommandError("--dry-run checks a posting made now: not with --scheduled-for.")
            request = engine.PostingRequest(
                template_code=options["template"],
                variables=variables,
                metadata=body.get("metadata"),
                description=options["description"],
                pending=True if options["pending"] else None,
                effective_at=times.get("effective_at"),
                commit_at=times.get("commit_at"),
            )
            if options["dry_run"]:
                data, replayed = answers.dry_run(ledger, request), False
            else:
                key = options["idempotency_key"]
                request.claim = idempotency.claim_for(key=key, seconds=None, body=body)
                if "scheduled_for" in times:
                    answer = scheduling.schedule(ledger, request, times["scheduled_for"])
                    data, replayed = answer.body, answer.replayed
                else:
                    _, data, replayed = answers.posting(engine.post(ledger, request))
        except LedgerError as exc:
            raise api_error(exc) from exc
        if replayed:
            self.stderr.write(
                f"Replayed: the idempotency key {options['idempotency_key']!r} was already "
                "used; nothing posted."
            )
        self.stdout.write(JSONRenderer().render(data).decode())
        if "scheduledFor" in body:
            self.stderr.write(
                f"Scheduled for {data['scheduledFor']}: nothing moves until post_scheduled "
                "posts it then."
            )
        if options["dry_run"]:
            self.stderr.write("Dry run: every check passed; nothing was written.")
