"""Local development helpers for ``make run``, runnable before Django is configured.

``python -m ledgerproject.localdev check-port HOST PORT`` exits 1 with one line when something
already listens there, so ``make run`` stops before it changes anything.
``python -m ledgerproject.localdev write-env PATH`` writes the local ``.env`` once: a generated
``SECRET_KEY``, the development switch, and the demo API token that ``bootstrap_demo`` keeps
across runs. An existing file is left as it is."""

from __future__ import annotations

import secrets
import socket
import sys
from pathlib import Path

from organizations.tokens import generate_secret

ENV_TEMPLATE = """\
# Local settings for this checkout, written once by `make run`; git-ignored, never commit it.
# A variable set in the environment wins over this file. Delete the file to generate new values.
SECRET_KEY={secret_key}
# Development defaults: no HTTPS redirect, ALLOWED_HOSTS 127.0.0.1/localhost. Never in production.
LEDGER_DEV_DEFAULTS=1
# The demo token that `manage.py bootstrap_demo` (run by `make run`) keeps and prints.
LEDGER_DEMO_TOKEN={demo_token}
# DATABASE_URL=postgres://user@127.0.0.1:5432/ledger   (unset: SQLite in db.sqlite3)
# REDIS_URL=redis://127.0.0.1:6379/0                   (shared throttle counts; else the database)
# THROTTLE_READ_RATE=3000/min
# THROTTLE_WRITE_RATE=1200/min
"""


def port_in_use(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.settimeout(1)
        return probe.connect_ex((host, port)) == 0


def write_env(path: Path) -> bool:
    """Write ``path`` unless it exists; True when it was written."""
    if path.exists():
        return False
    text = ENV_TEMPLATE.format(
        secret_key=secrets.token_urlsafe(50), demo_token=generate_secret().raw
    )
    path.write_text(text)
    path.chmod(0o600)
    return True


def main(argv: list[str]) -> int:
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
        if write_env(Path(argv[1])):
            print(f"Wrote {argv[1]} (a new SECRET_KEY and demo token; git-ignored).")
        return 0
    print("usage: python -m ledgerproject.localdev check-port HOST PORT | write-env PATH")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
