"""The commands from a real shell: --help texts, and a non-zero exit status on failure."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import load_command_class

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = {
    "import_templates": ("templates_dsl", "--atomic"),
    "export_templates": ("templates_dsl", "--canonical"),
    "post_transaction": ("transactions", "--idempotency-key"),
    "ledger_report": ("transactions", "--organization"),
}


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_has_help(name):
    app, option = COMMANDS[name]
    command = load_command_class(app, name)
    text = command.create_parser("manage.py", name).format_help()
    assert option in text and "--ledger" in text and len(command.help) > 80


def test_a_failure_exits_non_zero_from_the_shell():
    result = subprocess.run(
        [sys.executable, "manage.py", "ledger_report", "--organization", "x", "--ledger", "y"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "LEDGER_DEV_DEFAULTS": "1"},
        timeout=60,
    )
    assert result.returncode == 1
    assert "--organization must be a UUID" in result.stderr
