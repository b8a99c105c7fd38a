"""Python instructions per posting, counted: ``python -m bench.instructions [N]``. CPU time
moves too much on a shared machine to decide a change of a few per cent by; instructions do not.

Seeds ``ledger_bench_ir`` (300 accounts), then runs processes under valgrind's callgrind at
once: each loads Django, posts 30 floor transfers and 30 spread postings through the WSGI
handler as gunicorn calls it, then N more of one kind (none, floor, spread); a kind's count is
its own less none's, over N (PostgreSQL's work not counted). About four minutes for N = 100.
``--smoke``: without valgrind, a check. ``--twice MODULE:NAME`` (repeatable) prices one part of
a spread posting: one more spread process calls that function (or ``Class.method``) twice where
it is called once. The part must be one that may run twice (no write, no read of a request's
stream), called through the name given (a name imported into another module is not replaced)."""

from __future__ import annotations

import argparse
import gc
import importlib
import io
import json
import random
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from bench.database import DEFAULT_URL, ROOT, bench_env, fresh, seed_ledger, setup_django

URL = DEFAULT_URL.replace("ledger_bench", "ledger_bench_ir")
WARM_UP = 30


def postings(state: dict[str, Any]) -> dict[str, Callable[[], None]]:
    """``floor`` and ``spread``: a posting between random accounts of the bench's ledger
    (``state``) at each call, through the WSGI handler as gunicorn calls it (the whole stack:
    middleware, DRF, authentication, the engine, rendering)."""
    from django.core.wsgi import get_wsgi_application

    app, rng = get_wsgi_application(), random.Random(7)

    def post(kind: str) -> None:
        a, b = rng.sample(range(1, state["accounts"] + 1), 2)
        body: Any = {"amount": 100, "source": f"@b{a}", "destination": f"@b{b}"}
        path = f"/bench/floor/{state['ledger_id']}"
        if kind == "spread":
            path, body = f"{state['path']}/transactions", {"transactionTypeCode": "TRANSFER",
                                                          "variables": body}  # fmt: skip
        data = json.dumps(body).encode()
        environ = {
            "REQUEST_METHOD": "POST", "PATH_INFO": path, "SERVER_NAME": "localhost",
            "SERVER_PORT": "80", "HTTP_HOST": "localhost", "SERVER_PROTOCOL": "HTTP/1.1",
            "wsgi.url_scheme": "http", "wsgi.input": io.BytesIO(data), "wsgi.errors": sys.stderr,
            "CONTENT_LENGTH": str(len(data)), "CONTENT_TYPE": "application/json",
            "HTTP_AUTHORIZATION": f"Bearer {state['token']}",
        }  # fmt: skip
        status: list[str] = []
        answer = app(environ, lambda s, headers, exc_info=None: status.append(s))  # type: ignore[arg-type]
        b"".join(answer)
        answer.close()
        assert status[0].startswith("201"), status

    return {"floor": lambda: post("floor"), "spread": lambda: post("spread")}


def main(argv: list[str]) -> None:
    if argv[:1] == ["--child"]:
        return _child(argv[1], int(argv[2]), argv[3], argv[4])
    parser = argparse.ArgumentParser(prog="python -m bench.instructions", description=__doc__)
    parser.add_argument("count", nargs="?", type=int, default=100, help="postings of each kind")
    parser.add_argument("--database-url", default=URL, help="dropped and created afresh")
    parser.add_argument("--smoke", action="store_true", help="without valgrind: a check")
    parser.add_argument("--twice", action="append", default=[], metavar="MODULE:NAME",
                        help="price one part: a spread process that calls it twice")  # fmt: skip
    args = parser.parse_args(argv)
    if not args.smoke and shutil.which("valgrind") is None:
        sys.exit("bench.instructions needs valgrind (apt-get install valgrind)")
    fresh(args.database_url)
    state = json.dumps(seed_ledger(accounts=300))
    kinds = ("none", "floor", "spread", *(f"spread+{part}" for part in args.twice))

    def count(kind: str) -> int:
        valgrind = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
        child = ["-m", "bench.instructions", "--child", kind, str(args.count), state]
        done = subprocess.run([*([] if args.smoke else valgrind), sys.executable, *child,
                               args.database_url], env=bench_env(args.database_url), cwd=ROOT,
                              capture_output=True, text=True)  # fmt: skip
        found = re.search(r"Collected : (\d+)", done.stderr)
        if done.returncode != 0 or not (found or args.smoke):
            raise RuntimeError(f"the {kind} process failed:\n{done.stderr[-3000:]}")
        return int(found.group(1)) if found else 0

    with ThreadPoolExecutor(len(kinds)) as pool:
        counts = dict(zip(kinds, pool.map(count, kinds), strict=True))
    if args.smoke:
        return print("bench.instructions: every process posted (smoke: nothing counted)")
    per = {k: (counts[k] - counts["none"]) / args.count for k in counts if k != "none"}
    print(f"Python instructions per posting ({args.count} of each, after {WARM_UP} warm-up)")
    print(f"  floor {per['floor'] / 1e6:.3f} M, spread {per['spread'] / 1e6:.3f} M, "
          f"floor / spread {per['floor'] / per['spread']:.3f}")  # fmt: skip
    for part in args.twice:
        more = per[f"spread+{part}"] - per["spread"]
        print(f"  one call of {part}: {more / 1e3:+.0f} K ({more / per['spread']:+.1%})")


def _twice(part: str) -> None:
    """``MODULE:NAME`` (``NAME`` may be ``Class.method``) replaced by a function that calls it
    twice and answers the second call's result."""
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


def _child(kind: str, count: int, state: str, url: str) -> None:
    """Warm up, then post ``count`` of ``kind`` (none: nothing more; ``spread+MODULE:NAME``:
    spread postings with that part called twice)."""
    setup_django(url)
    kind, _, part = kind.partition("+")
    if part:
        _twice(part)
    kinds = postings(json.loads(state))
    for _ in range(WARM_UP):
        kinds["floor"]()
        kinds["spread"]()
    gc.collect()
    gc.disable()  # a collection falls where it falls: it would move the count
    run = kinds.get(kind, lambda: None)
    for _ in range(count if kind in kinds else 0):
        run()


if __name__ == "__main__":
    main(sys.argv[1:])
