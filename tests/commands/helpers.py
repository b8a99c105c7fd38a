"""Run a management command and capture what it prints, as a pipe or as a terminal."""

from __future__ import annotations

import io

from django.core.management import call_command

from organizations.models import Ledger


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def run(*args, tty: bool = False) -> tuple[str, str]:
    out = Terminal() if tty else io.StringIO()
    err = io.StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def scope(book) -> list[str]:
    ledger = Ledger.objects.get(pk=book.url.rsplit("/", 1)[-1])
    return ["--organization", str(ledger.organization_id), "--ledger", str(ledger.pk)]


def attempt(*args, tty: bool = False):
    """Like ``run`` for a command expected to fail: (stdout, stderr, the CommandError)."""
    from django.core.management import CommandError

    out = Terminal() if tty else io.StringIO()
    err = io.StringIO()
    try:
        call_command(*args, stdout=out, stderr=err)
    except CommandError as exc:
        return out.getvalue(), err.getvalue(), exc
    raise AssertionError(f"{args[0]} did not fail:\n{out.getvalue()}")
