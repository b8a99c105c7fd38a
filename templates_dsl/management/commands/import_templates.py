"""``manage.py import_templates PATH --organization ID --ledger ID [--atomic] [--dry-run]``:
load template files into a ledger through the template services, one result line per file."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from ledgerproject.cli import add_ledger_arguments, ledger_from_options, progress
from ledgerproject.errors import LedgerError
from organizations.models import Ledger
from templates_dsl import services
from templates_dsl.selectors import templates_active


def template_files(path: Path) -> list[Path]:
    if path.is_dir():
        files = sorted(p for p in path.glob("*.tmpl") if p.is_file())
        if not files:
            raise CommandError(f"No .tmpl files in {path}.")
        return files
    if path.is_file():
        return [path]
    raise CommandError(f"{path} is neither a file nor a folder.")


class Command(BaseCommand):
    help = (
        "Import transaction templates into a ledger from a .tmpl file or a folder of .tmpl "
        "files. Each file is parsed and checked like the API does (errors name the line and "
        "column), then creates the template or updates the one with the same code. Prints "
        "one line per file; exits 1 if any file failed. With --atomic, nothing is written "
        "unless every file is valid."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="A .tmpl file, or a folder whose *.tmpl files are read.")
        add_ledger_arguments(parser)
        parser.add_argument(
            "--atomic",
            action="store_true",
            help="All or nothing: write only if every file is valid.",
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="Check every file and report; write nothing."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        ledger = ledger_from_options(options, writable=True)
        files = template_files(Path(options["path"]))
        all_or_nothing = options["atomic"] or options["dry_run"]
        failed = 0
        seen: dict[str, Path] = {}
        writes = transaction.atomic() if all_or_nothing else nullcontext()
        with progress(self.stdout, len(files), "Importing") as (advance, say), writes:
            for path in files:
                line = self.import_one(ledger, path, seen)
                failed += line.startswith("FAILED")
                if all_or_nothing and line.startswith(("created", "updated")):
                    # Written only if every file passes: say what would be, not what was.
                    line = "would " + line.replace("created", "create", 1).replace(
                        "updated", "update", 1
                    )
                say(f"{path}: {line}")
                advance()
            if options["dry_run"] or (options["atomic"] and failed):
                transaction.set_rollback(True)
        if failed:
            note = "; nothing was written (--atomic)" if options["atomic"] else ""
            raise CommandError(f"{failed} of {len(files)} file(s) failed{note}.")
        verb = "imported"
        if options["dry_run"]:
            verb = "checked; nothing was written (--dry-run)"
        elif options["atomic"]:
            verb = "imported; every change above was written, together (--atomic)"
        self.stdout.write(f"OK: {len(files)} file(s) {verb}.")

    def import_one(self, ledger: Ledger, path: Path, seen: dict[str, Path]) -> str:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            return f"FAILED cannot read the file: {exc}"
        try:
            compiled = services.template_compile_for(ledger=ledger, text=text)
            code = compiled.code
            if code in seen:
                return f"FAILED the code {code} is also defined in {seen[code]}"
            seen[code] = path
            current = templates_active(ledger).filter(code=code).first()
            if current is not None and current.text == text:
                return f"unchanged {code}"
            with transaction.atomic():
                if current is None:
                    services.template_create(ledger=ledger, text=text)
                    return f"created {code}"
                current.ledger = ledger
                services.template_replace(template=current, text=text)
                return f"updated {code}"
        except LedgerError as exc:
            return f"FAILED {exc.error.code} {exc.description}"
