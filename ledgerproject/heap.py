"""The server process's heap, frozen once the application is loaded (``wsgi.py``, ``asgi.py``).

Everything a process builds while starting (Django, DRF, the URLconf and the views and models it
imports) lives as long as the process. Python's cyclic garbage collector would still walk all
of it at every full collection. The workers of one server start together and serve alike, so
they reach a full collection together, and a dozen of them at once stop the service for
hundreds of milliseconds under load. ``gc.freeze`` moves what exists at that point out of the
collector's sight: a full collection then walks only what the worker made since. Under
gunicorn with ``preload_app`` it runs once, in the master before the fork, and the workers'
collections no longer write to the objects they inherited; without it each worker freezes its
own heap.

Importing ``ledgerproject.wsgi`` or ``ledgerproject.asgi`` therefore freezes the importing
process's heap: a server's entry point, not a module to import elsewhere (tests load it in a
process of its own)."""

from __future__ import annotations

import gc

from django.urls import get_resolver


def freeze_startup() -> None:
    """Import the URLconf and every module it imports (the views, their serializers), drop the
    start-up's garbage, and freeze the rest out of the cyclic collector's sight."""
    get_resolver().url_patterns  # noqa: B018 - imports every urls module and view
    gc.collect()
    gc.freeze()
