"""``manage.py changepassword USER``: Django's, which reads the new password twice from a
terminal. Without a terminal Django's ends in a traceback (getpass reaches the end of its
input); this one answers one line, before it touches the database, that says how to set a
password without one. Ctrl-D at the prompt aborts in one line too."""

from __future__ import annotations

import os
import sys
from typing import Any

from django.contrib.auth.management.commands import changepassword
from django.core.management.base import CommandError

NO_TERMINAL = (
    "changepassword reads the new password from a terminal, and there is none here. Without "
    "one, set it in the back office (/admin/auth/user/, as another staff user), or make a new "
    "staff user: DJANGO_SUPERUSER_PASSWORD=... .venv/bin/python manage.py createsuperuser "
    "--noinput --username NAME --email ADDRESS"
)


def has_terminal() -> bool:
    """Whether getpass can read from a terminal: the process's own (/dev/tty), else stdin."""
    try:
        os.close(os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY))
    except OSError:
        return sys.stdin is not None and sys.stdin.isatty()
    return True


class Command(changepassword.Command):
    # Without a terminal it answers before it touches the database, even one that cannot be
    # reached; Django's own checks the migrations first.
    requires_migrations_checks = False

    def handle(self, *args: Any, **options: Any) -> str | None:
        if not has_terminal():
            raise CommandError(NO_TERMINAL)
        try:
            return super().handle(*args, **options)
        except EOFError:
            raise CommandError("aborted") from None
