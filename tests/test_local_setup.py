"""A checkout's first hour: `make run`'s .env, the settings that read it, one-line
configuration errors, the port check, and the home page."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

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


def test_manage_py_reads_the_env_file(tmp_path):
    env_file = tmp_path / ".env"
    localdev(["write-env", str(env_file)])
    env = _bare_env(LEDGER_ENV_FILE=str(env_file), SQLITE_PATH=str(tmp_path / "db.sqlite3"))
    done = _manage("migrate", "--noinput", "-v0", env=env)
    assert done.returncode == 0, done.stderr
    done = _manage("create_token", "ci-bot", env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1].startswith("lgr_")


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
