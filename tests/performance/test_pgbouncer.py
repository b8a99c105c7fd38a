"""The service behind PgBouncer in transaction pooling mode (docs/SCALING.md): a real
pgbouncer on a port in 8100-8199, and a process with ``PGBOUNCER_TRANSACTION_POOLING=1``
posting through it (psycopg 3 without server-side prepared statements or cursors)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from django.db import connection

from organizations.services import token_create
from tests.net import free_port

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PgBouncer fronts PostgreSQL"),
]

CONFIG = """
[databases]
* = host={host} port={port}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {listen}
unix_socket_dir =
auth_type = trust
auth_file = {dir}/userlist.txt
pool_mode = transaction
default_pool_size = 3
max_client_conn = 100
server_reset_query =
ignore_startup_parameters = extra_float_digits,options
logfile = {dir}/pgbouncer.log
pidfile = {dir}/pgbouncer.pid
admin_users = {user}
"""


@pytest.fixture
def pgbouncer():
    binary = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
    if not os.path.exists(binary):
        pytest.fail("pgbouncer is not installed: apt-get install pgbouncer (.ci/run does)")
    settings = connection.settings_dict
    workdir = tempfile.mkdtemp(prefix="pgbouncer-")
    os.chmod(workdir, 0o777)
    listen = free_port(8160, 8200)
    Path(workdir, "userlist.txt").write_text(f'"{settings["USER"]}" ""\n')
    Path(workdir, "pgbouncer.ini").write_text(
        CONFIG.format(
            host=settings["HOST"] or "127.0.0.1",
            port=settings["PORT"] or 5432,
            listen=listen,
            dir=workdir,
            user=settings["USER"],
        )
    )
    command = [binary, f"{workdir}/pgbouncer.ini"]
    if os.geteuid() == 0:  # pgbouncer refuses to run as root
        command = ["runuser", "-u", "postgres", "--", *command]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        for _ in range(50):
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", listen)) == 0:
                    break
            if process.poll() is not None:
                pytest.fail(f"pgbouncer could not start: {process.stdout.read().decode()[:300]}")
            time.sleep(0.1)
        yield listen
    finally:
        process.terminate()
        process.wait(timeout=10)
        shutil.rmtree(workdir, ignore_errors=True)


def test_it_posts_through_pgbouncer_in_transaction_mode(book, pgbouncer):
    book.post_template(
        """(transaction-template v1
  (chart-of-accounts-group-name POOL)
  (code TRANSFER)
  (send BRL $amount|2 (source (from $source :amount BRL $amount|2)))
  (distribute (to $destination :amount BRL $amount|2)))"""
    )
    for alias in ["@hot", *(f"@p{i}" for i in range(8))]:
        book.account(alias)
        book.fund(alias, 1_000_000)
    _, raw = token_create(name="pool")
    settings = connection.settings_dict
    url = urlunsplit(
        (
            "postgres",
            f"{settings['USER']}@127.0.0.1:{pgbouncer}",
            f"/{settings['NAME']}",
            "",
            "",
        )
    )
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "PGBOUNCER_TRANSACTION_POOLING": "1",
        "CONN_MAX_AGE": "60",
        "POOL_TOKEN": raw,
        "POOL_LEDGER_PATH": book.url,
        "PYTHONPATH": str(ROOT),
    }
    run = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("pgbouncer_client.py"))],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    summary = json.loads(run.stdout.strip().splitlines()[-1])
    assert summary["postings"] == 8 * 15 and summary["replayed"] and not summary["violations"]
    admin = f"postgres://{settings['USER']}@127.0.0.1:{urlsplit(url).port}/pgbouncer"
    with psycopg.connect(admin, autocommit=True, prepare_threshold=None) as pool:
        stats = pool.execute("SHOW STATS").fetchall()
        columns = [c.name for c in pool.execute("SHOW STATS").description or []]
    through = {row[0]: dict(zip(columns, row, strict=True)) for row in stats}
    assert through[settings["NAME"]]["total_xact_count"] > 8 * 15
