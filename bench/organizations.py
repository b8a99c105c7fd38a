"""Postings spread over many organizations, in-process: what distributing the tenant tables buys
(docs/SCALING.md), the Citus row of ``make bench-citus``. ``--database-url`` (single-node
PostgreSQL), ``--citus-url`` (a Citus coordinator), or both (as make does, each in a process of
its own): a fresh database (distributed on Citus) with ``organizations`` organizations of
``accounts`` funded accounts, then ``threads`` threads post for ``seconds`` seconds
(``bench.engine_rate``); on Citus, again on the organizations of one worker only."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.database import ROOT, fresh, funded_ledger
from bench.engine_rate import engine_rate


def run(url: str, *, citus: bool, organizations: int, accounts: int, **sizes: Any) -> Any:
    fresh(url, citus=citus)
    from django.db import connection

    ledgers = [funded_ledger(f"Org {n}", accounts) for n in range(organizations)]
    result = engine_rate(ledgers, accounts=accounts, **sizes)
    result["unit"] = f"postings/s in-process over {organizations} organizations"
    result["database"] = "citus (coordinator + 2 workers)" if citus else "postgresql"
    if citus:
        by_worker: dict[str, list[Any]] = {}
        with connection.cursor() as cursor:
            for ledger in ledgers:
                cursor.execute(
                    "SELECT n.nodeport FROM pg_dist_placement p JOIN pg_dist_node n "
                    "USING (groupid) WHERE p.shardid = get_shard_id_for_distribution_column("
                    "'organizations_ledger', %s::uuid)",
                    [ledger.organization_id],
                )
                by_worker.setdefault(str(cursor.fetchone()[0]), []).append(ledger)
        result["workers"] = {port: len(group) for port, group in by_worker.items()}
        busiest = max(by_worker.values(), key=len)
        one = engine_rate(busiest, accounts=accounts, **sizes)["units_per_s"]
        result |= {"one_worker_units_per_s": one, "one_worker_organizations": len(busiest)}
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", help="single-node PostgreSQL (the database is remade)")
    parser.add_argument("--citus-url", help="a Citus coordinator (scripts/citus-cluster start)")
    for name, default in (("organizations", 16), ("accounts", 20), ("threads", 8), ("seconds", 20)):
        parser.add_argument(f"--{name}", type=float if name == "seconds" else int, default=default)
    parser.add_argument("--output", help="write the JSON here too")
    args = parser.parse_args(argv)
    sizes = {k: getattr(args, k) for k in ("organizations", "accounts", "threads", "seconds")}
    urls = {"postgresql": args.database_url, "citus": args.citus_url}
    if not any(urls.values()):
        parser.error("give --database-url, --citus-url, or both")
    if not all(urls.values()):
        result = run(args.citus_url or args.database_url, citus=bool(args.citus_url), **sizes)
        print(json.dumps(result))
    else:  # each in its own process: Django is set up once per process
        result = {}
        for name, url in urls.items():
            flag = "--citus-url" if name == "citus" else "--database-url"
            command = [sys.executable, "-m", "bench.organizations", flag, url,
                       *(f"--{key}={value}" for key, value in sizes.items())]  # fmt: skip
            done = subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
            result[name] = json.loads(done.stdout.strip().splitlines()[-1])
        citus, postgresql = result["citus"], result["postgresql"]
        result["citus_over_postgresql"] = round(citus["units_per_s"] / postgresql["units_per_s"], 2)
        print(f"postgresql {postgresql['units_per_s']:>8} postings/s\ncitus"
              f"{citus['units_per_s']:>13} postings/s; the organizations of one worker: "
              f"{citus['one_worker_units_per_s']}\ncitus / postgresql: "
              f"{result['citus_over_postgresql']}")  # fmt: skip
    if args.output:
        Path(args.output).write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
