"""Ports for the servers tests start (gunicorn, pgbouncer), inside the range each may use."""

from __future__ import annotations

import random
import socket


def free_port(low: int, high: int) -> int:
    """A port in ``[low, high)`` nothing listens on now, tried in random order."""
    for port in random.sample(range(low, high), high - low):
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {low}-{high - 1}")
