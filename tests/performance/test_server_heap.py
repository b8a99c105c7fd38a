"""The server process's heap is settled once the application is loaded (``ledgerproject.heap``):
what starting built is frozen out of the cyclic collector's sight, so that a worker's full
collection walks only what it made since. Without it, a dozen workers reaching a full
collection together stopped the service for 300 to 500 ms under load (docs/PERFORMANCE.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import gc, json, sys
import ledgerproject.wsgi
frozen = gc.get_freeze_count()
json.dump({
    "frozen": frozen,
    "tracked": len(gc.get_objects()),
    "views": [m for m in ("transactions.views", "organizations.views") if m in sys.modules],
}, sys.stdout)
"""


def _load_the_wsgi_application() -> dict[str, object]:
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="ledgerproject.settings_test")
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_loading_the_application_freezes_its_heap_with_the_views_loaded():
    probe = _load_the_wsgi_application()
    # The views were imported before the freeze, as the first request would have.
    assert probe["views"] == ["transactions.views", "organizations.views"]
    frozen, tracked = probe["frozen"], probe["tracked"]
    assert isinstance(frozen, int) and isinstance(tracked, int)
    # Django, DRF and the project (about a hundred thousand objects) are out of the
    # collector's sight: a full collection right after would walk next to nothing.
    assert frozen > 50_000
    assert tracked < 1_000
