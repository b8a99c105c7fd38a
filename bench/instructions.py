"""Python instructions per posting, counted: ``python -m bench.instructions [N]``.

On a shared virtual machine CPU time per posting moves a great deal from one minute to the
next, too much to decide a change of a few per cent by. The number of
instructions the Python process runs does not move: this counts them with valgrind's callgrind.

Builds a fresh database (``ledger_bench_ir``), seeds 300 accounts, then runs three processes
under callgrind at once (the count does not depend on what else the machine does): each loads
Django, posts 30 floor transfers and 30 spread postings to warm up, then posts N more of one
kind (none, floor, spread) through the WSGI handler as gunicorn calls it. A kind's
instructions per posting is its count less the first's, over N. PostgreSQL's work is not
counted (it is another process): this is the service's own part, the one changes to the Python
move. Needs valgrind (Debian's ``valgrind`` package); about four minutes for N = 100.
``--smoke`` runs the three processes without valgrind, to check that they work.

``--twice MODULE:NAME`` (repeatable) prices one part of a spread posting: one more spread
process runs with that function (or ``Class.method``) called twice where it is called once,
and the difference from the spread's count is what one call of it costs. The part must be one
that may run twice (no write, no read of a request's stream), and it must be called through
the name given (a function imported by name into another module is not replaced there)."""

from __future__ import annotations

import argparse
import gc
import importlib
import io
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from bench.database import (
    DEFAULT_URL,
    ROOT,
    bench_env,
    migrate,
    recreate_database,
    setup_django,
)

URL = DEFAULT_URL.replace("ledger_bench", "ledger_bench_ir")
WARM_UP = 30
KINDS = ("none", "floor", "spread")


def main(argv: list[str]) -> None:
    if argv[:1] == ["--child"]:
        _child(argv[1], int(argv[2]), argv[3], argv[4])
        return
    parser = argparse.ArgumentParser(prog="python -m bench.instructions", description=__doc__)
    parser.add_argument("count", nargs="?", type=int, default=100, help="postings of each kind")
    parser.add_argument("--database-url", default=URL, help="dropped and created afresh")
    parser.add_argument(
        "--smoke", action="store_true", help="run the three processes without valgrind: a check"
    )
    parser.add_argument(
        "--twice", action="append", default=[], metavar="MODULE:NAME",
        help="price one part: a spread process that calls it twice (repeatable)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if not args.smoke and shutil.which("valgrind") is None:
        sys.exit("bench.instructions needs valgrind (apt-get install valgrind)")
    url, count = args.database_url, args.count
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ledgerproject.settings_bench")
    recreate_database(url)
    migrate(url)
    setup_django(url)
    from bench.seed import seed_ledger

    seeded = seed_ledger(accounts=300)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as state:
        json.dump(seeded.__dict__, state)
    kinds = (*KINDS, *(f"spread+{part}" for part in args.twice))
    try:
        with ThreadPoolExecutor(len(kinds)) as pool:
            found = pool.map(lambda k: _count(k, count, state.name, url, args.smoke), kinds)
            counts = dict(zip(kinds, found, strict=True))
    finally:
        os.unlink(state.name)
    if args.smoke:
        print("bench.instructions: every process posted (smoke: nothing counted)")
        return
    per = {k: (counts[k] - counts["none"]) / count for k in ("floor", "spread")}
    print(f"Python instructions per posting ({count} of each, callgrind, after {WARM_UP} warm-up)")
    for kind, value in per.items():
        print(f"  {kind:7s} {value / 1e6:.3f} M")
    print(f"  floor / spread: {per['floor'] / per['spread']:.3f}")
    for part in args.twice:
        more = (counts[f"spread+{part}"] - counts["none"]) / count - per["spread"]
        print(f"  one call of {part}: {more / 1e3:+.0f} K ({more / per['spread']:+.1%})")


def _count(kind: str, count: int, state: str, url: str, smoke: bool) -> int:
    valgrind = [] if smoke else ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
    child = ["-m", "bench.instructions", "--child", kind, str(count), state, url]
    done = subprocess.run(
        [*valgrind, sys.executable, *child], env=bench_env(url), capture_output=True, text=True,
        cwd=ROOT,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"the {kind} process failed:\n{done.stderr[-3000:]}")
    if smoke:
        return 0
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise RuntimeError(f"callgrind gave no count for {kind}:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def _twice(part: str) -> None:
    """``MODULE:NAME`` (``NAME`` may be ``Class.method``) replaced by a function that calls
    it twice and answers the second call's result."""
    module_name, _, dotted = part.partition(":")
    owner: Any = importlib.import_module(module_name)
    *path, name = dotted.split(".")
    for step in path:
        owner = getattr(owner, step)
    once = getattr(owner, name)

    def twice(*args: Any, **kwargs: Any) -> Any:
        once(*args, **kwargs)
        return once(*args, **kwargs)

    setattr(owner, name, twice)


def _child(kind: str, count: int, state_file: str, url: str) -> None:
    """Warm up, then post ``count`` of ``kind`` (none: nothing more; ``spread+MODULE:NAME``:
    spread postings with that part called twice)."""
    setup_django(url)
    kind, _, part = kind.partition("+")
    if part:
        _twice(part)
    from django.core.wsgi import get_wsgi_application

    with open(state_file) as state_in:
        state = json.load(state_in)
    app = get_wsgi_application()
    ledger = f"/v1/organizations/{state['organization_id']}/ledgers/{state['ledger_id']}"
    rng = random.Random(7)

    def call(path: str, body: dict[str, object]) -> None:
        data = json.dumps(body).encode()
        environ = {
            "REQUEST_METHOD": "POST", "PATH_INFO": path, "SERVER_NAME": "localhost",
            "SERVER_PORT": "80", "HTTP_HOST": "localhost", "SERVER_PROTOCOL": "HTTP/1.1",
            "wsgi.url_scheme": "http", "wsgi.input": io.BytesIO(data), "wsgi.errors": sys.stderr,
            "CONTENT_LENGTH": str(len(data)), "CONTENT_TYPE": "application/json",
            "HTTP_AUTHORIZATION": f"Bearer {state['token']}",
        }  # fmt: skip
        status: list[str] = []
        answer = app(environ, lambda s, headers, exc_info=None: status.append(s))
        b"".join(answer)
        answer.close()
        assert status[0].startswith("201"), status

    def pair() -> tuple[str, str]:
        a, b = rng.sample(range(1, state["accounts"] + 1), 2)
        return f"@b{a}", f"@b{b}"

    def floor() -> None:
        source, destination = pair()
        body = {"source": source, "destination": destination, "amount": 100}
        call(f"/bench/floor/{state['ledger_id']}", body)

    def spread() -> None:
        source, destination = pair()
        variables = {"amount": 100, "source": source, "destination": destination}
        call(f"{ledger}/transactions", {"transactionTypeCode": "TRANSFER", "variables": variables})

    for _ in range(WARM_UP):
        floor()
        spread()
    gc.collect()
    gc.disable()  # a collection falls where it falls: it would move the count
    run: Callable[[], None] | None = {"floor": floor, "spread": spread}.get(kind)
    for _ in range(count if run else 0):
        run()  # type: ignore[misc]


if __name__ == "__main__":
    main(sys.argv[1:])
