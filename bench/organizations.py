"""Postings spread over many organizations, in-process (no HTTP): the figure that says what
distributing the tenant tables buys. The same run on single-node PostgreSQL and through a Citus
coordinator (docs/SCALING.md) gives the "Citus" row of ``make bench``.

    python -m bench.organizations --database-url postgres://.../ledger_orgs
    python -m bench.organizations --citus-url postgres://...:9700/ledger_orgs_citus
    python -m bench.organizations --database-url ... --citus-url ...   # both, as make bench

Each run makes a fresh database (on Citus: on every node, with ``scripts/citus-cluster``),
migrates it (and distributes it), seeds ``organizations`` organizations with one ledger and
``accounts`` funded accounts each, then ``threads`` threads post 2-leg transfers for
``seconds`` seconds, each posting in a random organization between two random accounts."""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from bench.database import ROOT, bench_env, database_name, migrate, recreate_database, setup_django
from bench.threads import run_threads

CLUSTER = ROOT / "scripts" / "citus-cluster"


def prepare_database(url: str, *, citus: bool) -> None:
    if citus:
        name = database_name(url)
        subprocess.run([str(CLUSTER), "dropdb", name], check=True, capture_output=True)
        subprocess.run([str(CLUSTER), "createdb", name], check=True, capture_output=True)
        migrate(url)
        subprocess.run(
            [sys.executable, "manage.py", "distribute", "-v", "0"],
            cwd=ROOT,
            env=bench_env(url),
            check=True,
            capture_output=True,
        )
    else:
        recreate_database(url)
        migrate(url)


def seed(organizations: int, accounts: int) -> list[Any]:
    from bench.seed import FUND, TRANSFER
    from instruments.services import instrument_create
    from organizations.contents import account_create
    from organizations.services import ledger_create, organization_create
    from templates_dsl.services import template_create
    from transactions import engine

    ledgers = []
    for number in range(organizations):
        organization = organization_create(legal_name=f"Org {number}", legal_document=str(number))
        ledger = ledger_create(organization=organization, name="Main")
        instrument_create(ledger=ledger, name="Brazilian real", type="currency", code="BRL")
        template_create(ledger=ledger, text=TRANSFER.format(code="TRANSFER", pending="false"))
        template_create(ledger=ledger, text=FUND)
        for n in range(1, accounts + 1):
            account_create(ledger=ledger, asset_code="BRL", alias=f"@b{n}")
            engine.post(
                ledger,
                engine.PostingRequest(
                    template_code="FUND", variables={"amount": 10**12, "account": f"@b{n}"}
                ),
            )
        ledgers.append(ledger)
    return ledgers


def rate(ledgers: list[Any], *, accounts: int, threads: int, seconds: float) -> dict[str, Any]:
    from django.db import connection

    from transactions import engine

    def prepare(index: int) -> Callable[[], None]:
        rng = random.Random(index)

        def step() -> None:
            ledger = rng.choice(ledgers)
            a, b = rng.sample(range(1, accounts + 1), 2)
            engine.post(
                ledger,
                engine.PostingRequest(
                    template_code="TRANSFER",
                    variables={"amount": 1, "source": f"@b{a}", "destination": f"@b{b}"},
                ),
            )

        return step

    done, failed, elapsed = run_threads(threads, seconds, prepare, lambda: connection.close())
    return {
        "unit": f"postings/s in-process over {len(ledgers)} organizations, {threads} threads",
        "units_per_s": round(done / elapsed, 1),
        "requests": done,
        "errors": failed,
        "seconds": round(elapsed, 3),
    }


def run(
    url: str, *, citus: bool, organizations: int, accounts: int, threads: int, seconds: float
) -> dict[str, Any]:
    prepare_database(url, citus=citus)
    setup_django(url)
    started = time.perf_counter()
    ledgers = seed(organizations, accounts)
    seeded = time.perf_counter() - started
    result = rate(ledgers, accounts=accounts, threads=threads, seconds=seconds)
    result["database"] = "citus (coordinator + 2 workers)" if citus else "postgresql"
    result["seed_seconds"] = round(seeded, 1)
    if citus:
        # The same load on the organizations of one worker only: what the second one adds.
        by_worker = _by_worker(ledgers)
        result["workers"] = {port: len(group) for port, group in by_worker.items()}
        busiest = max(by_worker.values(), key=len)
        one = rate(busiest, accounts=accounts, threads=threads, seconds=seconds)
        result["one_worker_units_per_s"] = one["units_per_s"]
        result["one_worker_organizations"] = len(busiest)
    return result


def _by_worker(ledgers: list[Any]) -> dict[str, list[Any]]:
    """The ledgers by the port of the worker holding their organization."""
    from django.db import connection

    groups: dict[str, list[Any]] = {}
    with connection.cursor() as cursor:
        for ledger in ledgers:
            cursor.execute(
                "SELECT n.nodeport FROM pg_dist_placement p JOIN pg_dist_node n USING (groupid) "
                "WHERE p.shardid = get_shard_id_for_distribution_column("
                "'organizations_ledger', %s::uuid)",
                [ledger.organization_id],
            )
            groups.setdefault(str(cursor.fetchone()[0]), []).append(ledger)
    return groups


def compare(url: str, citus_url: str, **sizes: Any) -> dict[str, Any]:
    """Single-node PostgreSQL, then the Citus coordinator, each in its own process (Django is
    set up once per process): the two rows of ``make bench``."""
    options = [f"--{name}={value}" for name, value in sizes.items()]
    rows: dict[str, Any] = {}
    for name, flag, target in (
        ("postgresql", "--database-url", url),
        ("citus", "--citus-url", citus_url),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "bench.organizations", flag, target, *options],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        )
        rows[name] = json.loads(done.stdout.strip().splitlines()[-1])
    rows["citus_over_postgresql"] = round(
        rows["citus"]["units_per_s"] / rows["postgresql"]["units_per_s"], 2
    )
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", help="single-node PostgreSQL (the database is remade)")
    parser.add_argument("--citus-url", help="a Citus coordinator (scripts/citus-cluster start)")
    parser.add_argument("--organizations", type=int, default=16)
    parser.add_argument("--accounts", type=int, default=20)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--output", help="write the JSON here too")
    args = parser.parse_args(argv)
    sizes = {
        "organizations": args.organizations,
        "accounts": args.accounts,
        "threads": args.threads,
        "seconds": args.seconds,
    }
    if args.database_url and args.citus_url:
        result: dict[str, Any] = compare(args.database_url, args.citus_url, **sizes)
        for name in ("postgresql", "citus"):
            row = result[name]
            print(f"{name:<11} {row['units_per_s']:>8} postings/s  ({row['unit']})")
        print(
            f"{'citus, the organizations of one worker':<11} "
            f"{result['citus']['one_worker_units_per_s']:>8} postings/s"
        )
        print(f"citus / postgresql: {result['citus_over_postgresql']}")
    elif args.database_url or args.citus_url:
        url = args.citus_url or args.database_url
        result = run(url, citus=bool(args.citus_url), **sizes)
        print(json.dumps(result))
    else:
        parser.error("give --database-url, --citus-url, or both")
    if args.output:
        with open(args.output, "w") as out:
            json.dump(result, out, indent=2)


if __name__ == "__main__":
    main()
