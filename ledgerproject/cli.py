"""Pieces shared by the operator commands: the ``--organization``/``--ledger`` pair, the way
an ``LedgerError`` becomes a failing exit, and progress display (a rich bar when the output is a
terminal, plain lines otherwise)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, cast

from django.core.management.base import CommandError, CommandParser, OutputWrapper

from ledgerproject.errors import LedgerError
from organizations.models import Ledger


def add_ledger_arguments(parser: CommandParser) -> None:
    parser.add_argument("--organization", required=True, help="The organization's id (UUID).")
    parser.add_argument("--ledger", required=True, help="The ledger's id (UUID).")


def ledger_from_options(options: dict[str, Any], *, writable: bool = False) -> Ledger:
    """The ledger named by ``--organization`` and ``--ledger``; a ledger of another
    organization is "not found", as in the API."""
    ids = {}
    for name in ("organization", "ledger"):
        try:
            ids[name] = uuid.UUID(str(options[name]))
        except ValueError:
            raise CommandError(f"--{name} must be a UUID, not {options[name]!r}.") from None
    ledger = (
        Ledger.objects.select_related("organization")
        .filter(pk=ids["ledger"], organization_id=ids["organization"])
        .first()
    )
    if ledger is None:
        raise CommandError(f"No ledger {ids['ledger']} in organization {ids['organization']}.")
    if writable and ledger.deleted_at is not None:
        raise CommandError(f"The ledger {ledger.pk} has been deleted.")
    return ledger


def api_error(exc: LedgerError) -> CommandError:
    """The API's answer as one line: code, title, description, and each field's message."""
    text = f"{exc.error.code} {exc.error.title}: {exc.description}"
    if exc.fields:
        text += " " + "; ".join(f"{name}: {message}" for name, message in exc.fields.items())
    return CommandError(text)


def is_terminal(stream: OutputWrapper) -> bool:
    return bool(stream.isatty())


@contextmanager
def progress(
    stdout: OutputWrapper, total: int, label: str
) -> Iterator[tuple[Callable[[], None], Callable[[str], None]]]:
    """Yields ``(advance, say)``. On a terminal, a transient rich progress bar, and lines
    printed above it; otherwise no bar, and lines written as they are."""
    if not is_terminal(stdout) or total < 2:
        yield (lambda: None), stdout.write
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    console = Console(file=cast(Any, stdout)._out, force_terminal=True)
    with Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        console=console,
        transient=True,
        redirect_stdout=False,
        redirect_stderr=False,
    ) as bar:
        task = bar.add_task(label, total=total)
        yield (
            (lambda: bar.advance(task)),
            (lambda line: console.print(line, markup=False, highlight=False, soft_wrap=True)),
        )
