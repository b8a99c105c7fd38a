"""A checkout's first hour: `make run`'s .env, the settings that read it, the database it
records and creates, one-line configuration errors, the port check, the server's control
socket, and the home page."""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest
from django.db import connection

from ledgerproject.localdev import main as localdev

ROOT = Path(__file__).resolve().parents[1]


def _manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _bare_env(**extra: str) -> dict[str, str]:
    """The environment of a shell that has set nothing of the ledger's."""
    names = {"DEBUG", "LEDGER_DEV_DEFAULTS", "SECRET_KEY", "DATABASE_URL", "DJANGO_SETTINGS_MODULE"}
    env = {k: v for k, v in os.environ.items() if k not in names}
    env.update(extra)
    return env


def test_write_env_writes_a_secret_and_a_demo_token_once(tmp_path):
    path = tmp_path / ".env"
    assert localdev(["write-env", str(path)]) == 0
    text = path.read_text()
    values = dict(line.split("=", 1) for line in text.splitlines() if line and line[0] != "#")
    assert len(values["SECRET_KEY"]) >= 50 and values["LEDGER_DEV_DEFAULTS"] == "1"
    assert values["LEDGER_DEMO_TOKEN"].startswith("lgr_")
    assert path.stat().st_mode & 0o077 == 0
    assert localdev(["write-env", str(path)]) == 0
    assert path.read_text() == text  # written once, never replaced
    assert ".env" in (ROOT / ".gitignore").read_text().splitlines()


def test_manage_py_reads_the_env_file(tmp_path, monkeypatch):
    monkeypatch.delenv("DATABASE_URL", raising=False)  # else it is recorded in the file
    env_file = tmp_path / ".env"
    localdev(["write-env", str(env_file)])
    env = _bare_env(LEDGER_ENV_FILE=str(env_file), SQLITE_PATH=str(tmp_path / "db.sqlite3"))
    done = _manage("migrate", "--noinput", "-v0", env=env)
    assert done.returncode == 0, done.stderr
    done = _manage("create_token", "ci-bot", env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1].startswith("lgr_")


def _values(path: Path) -> dict[str, str]:
    return _values_of(path.read_text())


def _values_of(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if line and line[0] != "#")


def test_the_environments_database_url_is_recorded_for_manage_py(tmp_path, monkeypatch):
    database = tmp_path / "chosen.sqlite3"
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{database}")
    env_file = tmp_path / ".env"
    assert localdev(["write-env", str(env_file)]) == 0
    assert _values(env_file)["DATABASE_URL"] == f"sqlite:///{database}"
    # A manage.py line run later, without DATABASE_URL in its environment, uses that database.
    env = _bare_env(LEDGER_ENV_FILE=str(env_file), SQLITE_PATH=str(tmp_path / "db.sqlite3"))
    done = _manage("migrate", "--noinput", "-v0", env=env)
    assert done.returncode == 0, done.stderr
    assert database.exists() and not (tmp_path / "db.sqlite3").exists()


def test_an_existing_env_file_gets_the_database_url_and_keeps_its_lines(tmp_path, monkeypatch):
    env_file = tmp_path / ".env"
    monkeypatch.delenv("DATABASE_URL", raising=False)
    localdev(["write-env", str(env_file)])
    with env_file.open("a") as extra:
        extra.write("THROTTLE_READ_RATE=10/min\n")
    before = env_file.read_text()
    assert "DATABASE_URL" not in _values(env_file)

    monkeypatch.setenv("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/first")
    assert localdev(["write-env", str(env_file)]) == 0
    after = env_file.read_text()
    assert after.startswith(before)
    assert _values(env_file)["DATABASE_URL"] == "postgres://postgres@127.0.0.1:5432/first"
    assert localdev(["write-env", str(env_file)]) == 0
    assert env_file.read_text() == after

    monkeypatch.setenv("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/second")
    localdev(["write-env", str(env_file)])
    assert len(env_file.read_text().splitlines()) == len(after.splitlines())
    values = _values(env_file)
    assert values["DATABASE_URL"] == "postgres://postgres@127.0.0.1:5432/second"
    assert values["THROTTLE_READ_RATE"] == "10/min"
    assert values["SECRET_KEY"] == _values_of(before)["SECRET_KEY"]


@pytest.mark.postgres
@pytest.mark.skipif(connection.vendor != "postgresql", reason="creates a PostgreSQL database")
def test_a_missing_postgresql_database_is_created_once(capsys, monkeypatch, tmp_path):
    name = f"localdev_{secrets.token_hex(6)}"
    url = urlsplit(os.environ["DATABASE_URL"])._replace(path=f"/{name}").geturl()
    monkeypatch.setenv("DATABASE_URL", url)
    try:
        assert localdev(["create-database", str(tmp_path / ".env")]) == 0
        assert capsys.readouterr().out.splitlines() == [
            f"Created the PostgreSQL database {name} (DATABASE_URL named a missing one)."
        ]
        psycopg.connect(url).close()
        assert localdev(["create-database", str(tmp_path / ".env")]) == 0
        assert capsys.readouterr().out == ""
    finally:
        maintenance = urlsplit(url)._replace(path="/postgres").geturl()
        with psycopg.connect(maintenance, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}"')


def test_a_database_that_cannot_be_reached_is_one_line(capsys, monkeypatch, tmp_path):
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.delenv("DATABASE_URL", raising=False)
    env_file = tmp_path / ".env"
    env_file.write_text(f"DATABASE_URL=postgres://postgres@127.0.0.1:{port}/nowhere\n")
    assert localdev(["create-database", str(env_file)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("make run: Cannot connect to the database nowhere")
    assert localdev(["create-database", str(tmp_path / "missing.env")]) == 0  # SQLite: nothing


def _make_dry_run(*args: str) -> list[str]:
    done = subprocess.run(
        ["make", "--dry-run", "--no-print-directory", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.splitlines()


def test_make_run_records_and_creates_the_database_even_with_an_env_file():
    lines = _make_dry_run("--old-file=.env", "run", "PORT=8123")
    steps = [i for i, line in enumerate(lines) if "localdev write-env" in line]
    steps += [i for i, line in enumerate(lines) if "localdev create-database" in line]
    steps += [i for i, line in enumerate(lines) if "manage.py migrate" in line]
    assert len(steps) == 3 and steps == sorted(steps), lines


def test_two_make_runs_have_a_control_socket_each():
    sockets = set()
    for port in ("8123", "8124"):
        server = " ".join(_make_dry_run("run", f"PORT={port}")).split("bin/gunicorn ", 1)[1]
        sockets.add(server.split("--control-socket ", 1)[1].split()[0])
    assert len(sockets) == 2


def test_a_missing_setting_is_one_line_not_a_traceback(tmp_path):
    done = _manage("create_token", "ci-bot", env=_bare_env(LEDGER_ENV_FILE=""))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "manage.py: configuration error: SECRET_KEY is not set: on a checkout run `make run` "
        "once (it writes .env), in production set SECRET_KEY in the environment."
    ]
    done = _manage("check", env=_bare_env(LEDGER_DEV_DEFAULTS="1", THROTTLE_READ_RATE="lots"))
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "THROTTLE_READ_RATE must look like 600/min" in done.stderr


def test_production_still_refuses_to_start_without_its_settings():
    code = "import ledgerproject.wsgi"
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=_bare_env(LEDGER_ENV_FILE="", DJANGO_SETTINGS_MODULE="ledgerproject.settings"),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0 and "SECRET_KEY is not set" in done.stderr


def test_the_port_check_refuses_a_busy_port(capsys):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert localdev(["check-port", "127.0.0.1", str(port)]) == 1
        assert f"Port {port} on 127.0.0.1 is already in use" in capsys.readouterr().err
    assert localdev(["check-port", "127.0.0.1", str(port)]) == 0


def test_make_run_checks_the_port_before_it_changes_anything():
    makefile = (ROOT / "Makefile").read_text()
    run = makefile.split("\nrun:", 1)[1].split("\n\n", 1)[0].splitlines()
    assert "check-port" in run[1] and "migrate" in run[2] and "bootstrap_demo" in run[3]
    assert "HOST and PORT" in makefile


def test_the_home_page_links_the_docs_the_admin_and_health(client):
    response = client.get("/")
    assert response.status_code == 200
    html = response.content.decode()
    for link in ('href="/v1/docs/"', 'href="/v1/openapi.json"', 'href="/admin/"', 'href="/health"'):
        assert link in html
