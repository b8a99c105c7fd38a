"""Every command line of the docs runs as written from a checkout after one `make run`.

The shell code blocks of README.md and docs/*.md are read as a shell would read them
(continuation lines joined, comments dropped, variables the block sets expanded, pipelines and
lists split). Then every command that invokes manage.py must do it as
``.venv/bin/python manage.py`` (a bare ``manage.py`` is not on the PATH, and ``./manage.py``
runs the system Python, which has no Django); its command must exist, run with ``--help`` in a
subprocess as the line runs it, and its arguments must parse. A program that requirements.txt
installs into .venv/bin is written with that path (`make run` does not put .venv/bin on the
PATH), a relative path names a file of the checkout, and ``make`` names a target of the
Makefile."""

from __future__ import annotations

import functools
import os
import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.core.management import CommandError, get_commands, load_command_class

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```$", re.M | re.S)
# Blocks written as shell; an unlabelled block may be shell or a program's output, so only its
# lines that name manage.py are read.
SHELL = {"sh", "bash", "shell", "console"}
ASSIGNMENT = re.compile(r"\A[A-Za-z_][A-Za-z0-9_]*=")
VARIABLE = re.compile(r"\$(?:\{(\w+)\}|(\w+))")
OPERATOR = re.compile(r"\A[|&;]+\Z")
VENV_BIN = ROOT / ".venv" / "bin"
SYSTEM_PYTHONS = {"python", "python3"}  # in .venv/bin too, but a doc may mean the system's
# What the reader fills in (`$O`, `<UUID>`): the ids the commands take.
PLACEHOLDER = re.compile(r"\A(?:\$\w+|<\w+>)\Z")
AN_ID = "01a2e8f0-0000-7000-8000-000000000000"


@dataclass(frozen=True)
class Command:
    where: str  # page:line
    words: tuple[str, ...]  # without the environment assignments before the program

    @property
    def program(self) -> str:
        return self.words[0]


def logical_lines(text: str) -> list[tuple[int, str]]:
    """(line number in the block, line) with backslash continuations joined."""
    lines: list[tuple[int, str]] = []
    pending = ""
    start = 0
    for number, line in enumerate(text.splitlines()):
        if not pending:
            start = number
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        lines.append((start, pending + line))
        pending = ""
    return lines


def commands_of(words: list[str]) -> list[list[str]]:
    """A pipeline or list of commands, split at its operators."""
    commands: list[list[str]] = [[]]
    for word in words:
        if OPERATOR.match(word):
            commands.append([])
        else:
            commands[-1].append(word)
    return [command for command in commands if command]


def expand(line: str, variables: dict[str, str]) -> str:
    """The variables the block has set, expanded; others (placeholders) left as written."""
    return VARIABLE.sub(lambda m: variables.get(m.group(1) or m.group(2), m.group(0)), line)


def shell_commands() -> list[Command]:
    found = []
    for page in PAGES:
        text = page.read_text()
        for block in BLOCK.finditer(text):
            language = block.group(1)
            if language not in SHELL and language != "":
                continue
            first_line = text[: block.start(2)].count("\n") + 1
            variables: dict[str, str] = {}
            for number, line in logical_lines(block.group(2)):
                line = expand(line, variables)
                if language not in SHELL and "manage.py" not in line:
                    continue
                lexer = shlex.shlex(line, posix=True, punctuation_chars="|&;")
                lexer.whitespace_split = True
                lexer.commenters = "#"
                for words in commands_of(list(lexer)):
                    settings = [w for w in words if ASSIGNMENT.match(w)]
                    rest = words[len(settings) :] if words[: len(settings)] == settings else words
                    where = f"{page.relative_to(ROOT)}:{first_line + number}"
                    if not rest:
                        variables.update(s.split("=", 1) for s in settings)
                    else:
                        found.append(Command(where, tuple(rest)))
    return found


COMMANDS = shell_commands()
MANAGE_PY = [c for c in COMMANDS if any(w.endswith("manage.py") for w in c.words)]


def test_the_docs_have_command_lines_to_check():
    assert len(MANAGE_PY) >= 15 and len(COMMANDS) >= 30
    pages = {c.where.split(":")[0] for c in MANAGE_PY}
    assert {"docs/BALANCE-CONTROLS.md", "docs/EVENTS.md", "docs/OPERATORS.md"} <= pages


@functools.cache
def help_of(program: str, name: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [program, "manage.py", name, "--help"],
        cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "ledgerproject.settings_test"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("command", MANAGE_PY, ids=lambda c: c.where)
def test_every_manage_py_line_runs_as_written(command: Command):
    assert command.words[:2] == (".venv/bin/python", "manage.py"), (
        f"{command.where}: write `.venv/bin/python manage.py ...`, not {' '.join(command.words)}"
    )
    name, *arguments = command.words[2:]
    done = help_of(command.program, name)
    assert done.returncode == 0 and "usage:" in done.stdout, (command.where, done.stderr)
    app = get_commands()[name]
    parser = load_command_class(app, name).create_parser("manage.py", name)
    try:
        parser.parse_args([PLACEHOLDER.sub(AN_ID, word) for word in arguments])
    except CommandError as exc:
        raise AssertionError(f"{command.where}: {' '.join(command.words)}: {exc}") from None


def makefile_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text()
    return set(re.findall(r"^([A-Za-z0-9_.-]+):", text, re.M))


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.where)
def test_every_program_is_there_after_make_run(command: Command):
    program = command.program
    if program.startswith("/"):
        return  # a path the line itself makes (a scratch virtualenv, say)
    if "/" in program:
        assert (ROOT / program).exists(), f"{command.where}: no {program} in a checkout"
    else:
        installed = (VENV_BIN / program).exists() and program not in SYSTEM_PYTHONS
        assert not installed, f"{command.where}: write .venv/bin/{program}; it is not on the PATH"
    if program == "make":
        targets = [w for w in command.words[1:] if not w.startswith("-") and "=" not in w]
        assert set(targets) <= makefile_targets(), f"{command.where}: make {targets}"
