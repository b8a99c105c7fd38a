#!/usr/bin/env python
"""Django's command-line utility for the ledger service.

A setting that is missing or malformed is reported as one line (what to set), not a traceback."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ledgerproject.settings")
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    from ledgerproject.actors import as_command

    as_command(sys.argv)  # what a command writes names it and the user who ran it
    try:
        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as exc:
        sys.stderr.write(f"manage.py: configuration error: {exc}\n")
        sys.exit(2)


if __name__ == "__main__":
    main()
