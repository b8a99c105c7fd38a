"""changepassword without a terminal (a script, a pipe, CI) answers one line and exits 1, where
Django's own ends in a traceback; and Ctrl-D at its prompt aborts in one line."""

from __future__ import annotations

import getpass
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from organizations.management.commands import changepassword

ROOT = Path(__file__).resolve().parents[2]


def test_without_a_terminal_it_is_one_line_and_exit_status_1():
    done = subprocess.run(
        [sys.executable, "manage.py", "changepassword", "admin"],
        cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "ledgerproject.settings_test"},
        stdin=subprocess.DEVNULL,
        start_new_session=True,  # no controlling terminal: /dev/tty cannot be opened
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1  # (stdout may warn of migrations: this database is unmigrated)
    assert done.stderr.splitlines() == [f"CommandError: {changepassword.NO_TERMINAL}"]
    assert "DJANGO_SUPERUSER_PASSWORD" in done.stderr and "/admin/auth/user/" in done.stderr


@pytest.mark.django_db
def test_end_of_input_at_the_prompt_aborts_in_one_line(monkeypatch):
    get_user_model().objects.create_user("admin", password="an old password")

    def end_of_input(prompt: str = "") -> str:
        raise EOFError

    monkeypatch.setattr(changepassword, "has_terminal", lambda: True)
    monkeypatch.setattr(getpass, "getpass", end_of_input)
    with pytest.raises(CommandError, match=r"^aborted$"):
        call_command(changepassword.Command(), "admin")
