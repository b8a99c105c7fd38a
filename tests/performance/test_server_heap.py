"""The server process's heap is frozen once the application is loaded (``ledgerproject.heap``):
what starting built is out of the cyclic collector's sight, so that a worker's full collection
walks only what it made since. Without it, a dozen workers reaching a full collection together
stopped the service for hundreds of milliseconds under load."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import gc, importlib, json, sys
importlib.import_module(sys.argv[1])
json.dump({
    "frozen": gc.get_freeze_count(),
    "tracked": len(gc.get_objects()),
    "views": [m for m in ("transactions.views", "organizations.views") if m in sys.modules],
}, sys.stdout)
"""


@pytest.mark.parametrize("entry_point", ["ledgerproject.wsgi", "ledgerproject.asgi"])
def test_loading_the_application_freezes_its_heap_with_the_views_loaded(entry_point):
    # In a process of its own: importing the entry point freezes the importing process's heap.
    done = subprocess.run(
        [sys.executable, "-c", PROBE, entry_point],
        cwd=ROOT,
        env=dict(os.environ, DJANGO_SETTINGS_MODULE="ledgerproject.settings_test"),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    probe = json.loads(done.stdout)
    # The views were imported before the freeze, as the first request would have.
    assert probe["views"] == ["transactions.views", "organizations.views"]
    # Django, DRF and the project (about a hundred thousand objects) are out of the
    # collector's sight: a full collection right after would walk next to nothing.
    assert probe["frozen"] > 50_000
    assert probe["tracked"] < 1_000
