"""The bench's own PostgreSQL database, dropped, created and migrated afresh for every run, and
its ledgers, seeded in-process with ``ledgerproject.settings_bench``: an organization with one
ledger in BRL, the templates the scenarios post, accounts ``@b1`` .. ``@bN`` (the bench's own
also ``@hot``), funded through the posting service."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/ledger_bench"


def bench_env(url: str) -> dict[str, str]:
    settings = {"DJANGO_SETTINGS_MODULE": "ledgerproject.settings_bench", "DATABASE_URL": url}
    return {**os.environ, **settings, "LEDGER_DEV_DEFAULTS": "1"}


def fresh(url: str, *, citus: bool = False) -> None:
    """A new database at ``url`` (on Citus: on every node with ``scripts/citus-cluster``, then
    distributed), migrated, and Django set up in this process against it."""
    name = urlsplit(url).path.lstrip("/")
    if not name.replace("_", "").isalnum():
        raise ValueError(f"refusing an odd database name: {name!r}")
    for step in ("dropdb", "createdb") if citus else ():
        cluster = [ROOT / "scripts" / "citus-cluster", step, name]
        subprocess.run(cluster, check=True, capture_output=True)
    if not citus:
        admin = urlunsplit(urlsplit(url)._replace(path="/postgres"))
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{name}"')
    for command in (["migrate", "--noinput"], ["distribute"])[: 1 + citus]:
        manage = [sys.executable, "manage.py", *command, "-v", "0"]
        subprocess.run(manage, cwd=ROOT, env=bench_env(url), check=True)
    setup_django(url)


def setup_django(url: str) -> None:
    """Configure Django in this process against the bench database."""
    os.environ.update(bench_env(url))
    import django

    django.setup()


TRANSFER = """(transaction-template v1 (chart-of-accounts-group-name BENCH) (code {code})
  (pending {pending})
  (send BRL $amount|2 (source (from $source :amount BRL $amount|2 (chart-of-accounts DEBIT))))
  (distribute (to $destination :amount BRL $amount|2 (chart-of-accounts CREDIT))))"""
FUND = """(transaction-template v1 (chart-of-accounts-group-name BENCH) (code FUND)
  (send BRL $amount|2
    (source (from @external/BRL :amount BRL $amount|2 (chart-of-accounts CASH_IN))))
  (distribute (to $account :amount BRL $amount|2 (chart-of-accounts DEPOSITS))))"""


def seed_ledger(*, accounts: int) -> dict[str, Any]:
    """The bench's ledger, settled, and a token: its ``ledger_id``, ``path``, ``token``."""
    from organizations.services import token_create

    ledger = funded_ledger("Bench", accounts, bench=True)
    _, token = token_create(name=f"bench-{ledger.pk.hex[:8]}")
    settle()
    path = f"/v1/organizations/{ledger.organization_id}/ledgers/{ledger.pk}"
    return {"ledger_id": str(ledger.pk), "path": path, "token": token, "accounts": accounts}


def funded_ledger(name: str, accounts: int, *, bench: bool = False, watched: bool = False) -> Any:
    """With ``bench``, also ``@hot``, TRANSFER_HELD, and statistics before the funding: a
    statement prepared on tables the planner believes empty keeps that plan on its connection,
    and the locking one then visits every balance of the ledger per posting. With ``watched``,
    a balance monitor on every account that the transfers never trip (available below zero)."""
    from instruments.services import instrument_create
    from organizations.contents import account_create
    from organizations.monitors import monitor_create
    from organizations.services import ledger_create, organization_create
    from templates_dsl.services import template_create
    from transactions import engine

    organization = organization_create(legal_name=name, legal_document=name)
    ledger = ledger_create(organization=organization, name=name)
    instrument_create(ledger=ledger, name="Brazilian real", type="currency", code="BRL")
    for code, pending in (("TRANSFER", "false"), ("TRANSFER_HELD", "true"))[: 1 + bench]:
        template_create(ledger=ledger, text=TRANSFER.format(code=code, pending=pending))
    template_create(ledger=ledger, text=FUND)
    aliases = [f"@b{n}" for n in range(1, accounts + 1)] + ["@hot"] * bench
    made = [account_create(ledger=ledger, asset_code="BRL", alias=alias) for alias in aliases]
    if bench:
        settle()
    for alias in aliases:  # 10**12 minor units each: no scenario ever runs out
        variables = {"amount": 10**12, "account": alias}
        engine.post(ledger, engine.PostingRequest(template_code="FUND", variables=variables))
    for account in made if watched else ():
        monitor_create(ledger=ledger, account_id=account.pk, measure="available",
                       condition="below", threshold={"amount": 0, "scale": 2})  # fmt: skip
    return ledger


def settle() -> None:
    """``VACUUM ANALYZE``, as a deployed database has statistics: without them a round ran on
    plans made for empty tables until autovacuum analyzed them mid-run."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
