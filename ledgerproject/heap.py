"""The server process's heap, settled once the application is loaded (``wsgi.py``).

Everything a process builds while starting (Django, DRF, the URL patterns and the views they
import, the models) lives as long as the process. Python's cyclic garbage collector would
still walk all of it at every full collection: 35 to 40 ms of CPU per worker here. The workers
of one server start together and serve alike, so they reach a full collection together, and
a dozen of them then stopped the service for 300 to 500 ms at a time under load
(docs/PERFORMANCE.md, "The saturated p99's stalls"). ``gc.freeze`` moves what exists at that
point out of the collector's sight: a full collection then walks only what was made since.
Under gunicorn with ``preload_app`` it runs in the master before the fork, so the workers
also share those pages instead of copying them when the collector would have written to
them."""

from __future__ import annotations

import gc


def settle() -> None:
    """Load what the first request would (the URL patterns and every view they import),
    drop the start-up's garbage, and freeze the rest out of the cyclic collector's sight."""
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018 - imports every urls module and view
    gc.collect()
    gc.freeze()
