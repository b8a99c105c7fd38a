"""``manage.py export_templates --organization ID --ledger ID [DIR]``: write a ledger's active
templates as ``<CODE>.tmpl`` files that ``import_templates`` reads back. Without DIR they go to
``exported-templates/<ledger id>/``, which a checkout's ``.gitignore`` ignores: one folder per
ledger, so that an export never mixes two ledgers' files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ledgerproject.cli import add_ledger_arguments, ledger_from_options, progress
from templates_dsl.compile import compile_template
from templates_dsl.formatter import format_template
from templates_dsl.selectors import templates_active

DEFAULT_FOLDER = Path("exported-templates")


def file_name(code: str) -> str:
    """Codes may hold '/', which a file name cannot."""
    return code.replace("%", "%25").replace("/", "%2F") + ".tmpl"


class Command(BaseCommand):
    help = (
        "Write every active transaction template of a ledger to DIR as <CODE>.tmpl (created "
        "if missing; existing files of the same name are replaced). The text is written as "
        "stored, or in the formatter's canonical layout with --canonical."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        add_ledger_arguments(parser)
        parser.add_argument(
            "dir",
            nargs="?",
            help=f"The folder to write the .tmpl files to (default: {DEFAULT_FOLDER}/<ledger id>).",
        )
        parser.add_argument(
            "--canonical", action="store_true", help="Write the canonical layout, not the text."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        ledger = ledger_from_options(options)
        folder = Path(options["dir"]) if options["dir"] else DEFAULT_FOLDER / str(ledger.pk)
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CommandError(f"Cannot create {folder}: {exc}") from exc
        templates = list(templates_active(ledger).order_by("code"))
        with progress(self.stdout, len(templates), "Exporting") as (advance, say):
            for template in templates:
                text = template.text
                if options["canonical"]:
                    text = format_template(compile_template(text))
                target = folder / file_name(template.code)
                try:
                    target.write_text(text, "utf-8")
                except OSError as exc:
                    raise CommandError(f"Cannot write {target}: {exc}") from exc
                say(f"{target}: {template.code}")
                advance()
        self.stdout.write(f"OK: {len(templates)} template(s) written to {folder}.")
