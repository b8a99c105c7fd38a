"""Local development helpers for ``make run``, runnable before Django is configured.

``python -m ledgerproject.localdev check-port HOST PORT`` exits 1 with one line when something
already listens there, so ``make run`` stops before it changes anything.
``python -m ledgerproject.localdev write-env PATH`` writes the local ``.env`` once: a generated
``SECRET_KEY``, the development switch, and the demo API token that ``bootstrap_demo`` keeps
across runs. An existing file keeps its lines. At every run, a ``DATABASE_URL`` set in the
environment is recorded in the file (added, or replacing the one there), so that the
``manage.py`` lines of the docs, which read ``.env``, use the database ``make run`` used.
``python -m ledgerproject.localdev create-database PATH`` creates the PostgreSQL database that
``DATABASE_URL`` (the environment's, else the one in PATH) names when it does not exist yet."""

from __future__ import annotations

import os
import re
import secrets
import socket
import sys
from pathlib import Path
from urllib.parse import urlsplit

from organizations.tokens import generate_secret

ENV_TEMPLATE = """\
# Local settings for this checkout, written once by `make run`; git-ignored, never commit it.
# A variable set in the environment wins over this file. Delete the file to generate new values.
SECRET_KEY={secret_key}
# Development defaults: no HTTPS redirect, ALLOWED_HOSTS 127.0.0.1/localhost. Never in production.
LEDGER_DEV_DEFAULTS=1
# The demo token that `manage.py bootstrap_demo` (run by `make run`) keeps and prints.
LEDGER_DEMO_TOKEN={demo_token}
{database}
# REDIS_URL=redis://127.0.0.1:6379/0                   (shared throttle counts; else the database)
# THROTTLE_READ_RATE=3000/min
# THROTTLE_WRITE_RATE=1200/min
"""
NO_DATABASE = "# DATABASE_URL=postgres://user@127.0.0.1:5432/ledger   (unset: SQLite in db.sqlite3)"
DATABASE_COMMENT = (
    "# The database of `make run` (recorded from the environment); delete the line for SQLite."
)
# The lines django-environ reads as a setting (settings.py reads .env through it).
DATABASE_LINE = re.compile(r"\A(?:export )?DATABASE_URL=(.*)\Z")


class LocalSetupError(Exception):
    """What stops ``make run``, in one line."""


def port_in_use(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.settimeout(1)
        return probe.connect_ex((host, port)) == 0


def environment_database_url() -> str:
    url = os.environ.get("DATABASE_URL", "").strip()
    if "\n" in url or "\r" in url:
        raise LocalSetupError("DATABASE_URL holds a line break; set it to one URL.")
    return url


def unquote(value: str) -> str:
    """A value as django-environ reads it: single or double quotes around it are not part of it."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def recorded_database_url(path: Path) -> str:
    """The ``DATABASE_URL`` of the env file ``path`` (the last one wins, as in django-environ)."""
    url = ""
    if path.exists():
        for line in path.read_text().splitlines():
            match = DATABASE_LINE.match(line)
            if match:
                url = unquote(match.group(1)).strip()
    return url


def write_env(path: Path) -> bool:
    """Write ``path`` unless it exists; True when it was written."""
    if path.exists():
        return False
    url = environment_database_url()
    database = f"{DATABASE_COMMENT}\nDATABASE_URL={url}" if url else NO_DATABASE
    text = ENV_TEMPLATE.format(
        secret_key=secrets.token_urlsafe(50),
        demo_token=generate_secret().raw,
        database=database,
    )
    path.write_text(text)
    path.chmod(0o600)
    return True


def record_database_url(path: Path) -> str | None:
    """Record the environment's ``DATABASE_URL`` in the existing env file ``path``, leaving every
    other line as it is: 'added', 'replaced', or None when there was nothing to do."""
    url = environment_database_url()
    if not url or recorded_database_url(path) == url:
        return None
    lines = path.read_text().splitlines()
    kept = [line for line in lines if not DATABASE_LINE.match(line)]
    outcome = "replaced" if len(kept) < len(lines) else "added"
    if outcome == "added":
        kept.append(DATABASE_COMMENT)
    kept.append(f"DATABASE_URL={url}")
    path.write_text("\n".join(kept) + "\n")
    return outcome


def create_database(url: str) -> str | None:
    """Create the PostgreSQL database ``url`` names when it does not exist; its name when it
    was created, None when there was nothing to do (another engine, or it exists)."""
    if urlsplit(url).scheme not in {"postgres", "postgresql"}:
        return None
    import psycopg
    from psycopg import errors, sql
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    name = str(conninfo_to_dict(url).get("dbname") or "")
    if not name:
        return None
    try:
        psycopg.connect(url, connect_timeout=10).close()
        return None
    except psycopg.OperationalError as exc:
        refusal = one_line(exc)
    try:
        with psycopg.connect(
            make_conninfo(url, dbname="postgres"), autocommit=True, connect_timeout=10
        ) as connection:
            found = connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
            if found.fetchone() is not None:
                raise LocalSetupError(f"Cannot connect to the database {name}: {refusal}")
            connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    except errors.DuplicateDatabase:
        return None  # another process created it meanwhile
    except psycopg.Error as exc:
        raise LocalSetupError(
            f"Cannot connect to the database {name} ({refusal}), nor create it through the "
            f"maintenance database postgres: {one_line(exc)}"
        ) from exc
    return name


def one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())


def main(argv: list[str]) -> int:
    try:
        return run(argv)
    except LocalSetupError as exc:
        print(f"make run: {exc}", file=sys.stderr)
        return 1


def run(argv: list[str]) -> int:
    if len(argv) == 3 and argv[0] == "check-port":
        host, port = argv[1], int(argv[2])
        if port_in_use(host, port):
            print(
                f"Port {port} on {host} is already in use (another `make run`?). Stop it, "
                f"or choose another: make run PORT={port + 1}",
                file=sys.stderr,
            )
            return 1
        return 0
    if len(argv) == 2 and argv[0] == "write-env":
        path = Path(argv[1])
        if write_env(path):
            recorded = ", DATABASE_URL" if environment_database_url() else ""
            print(f"Wrote {path} (a new SECRET_KEY and demo token{recorded}; git-ignored).")
        elif outcome := record_database_url(path):
            print(f"Recorded DATABASE_URL in {path} ({outcome}): manage.py uses that database.")
        return 0
    if len(argv) == 2 and argv[0] == "create-database":
        url = environment_database_url() or recorded_database_url(Path(argv[1]))
        if name := create_database(url):
            print(f"Created the PostgreSQL database {name} (DATABASE_URL named a missing one).")
        return 0
    print(
        "usage: python -m ledgerproject.localdev check-port HOST PORT | write-env PATH "
        "| create-database PATH"
    )
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
