"""The bench's gunicorn worker: ``gthread`` that holds one connection per thread, kept alive.

A ``gthread`` worker accepts every connection it can and keeps each for its whole keep-alive.
With 12 workers of one thread and wrk's 12 connections, the connections fell to the workers
at random: a worker that took two served them in turn while another sat idle, and a round
kept the machine only half busy. This worker stops accepting once each
of its threads has a connection (``worker_connections`` = ``threads``, set in
``gunicorn_conf.py``) and still keeps them alive, so the 12 connections fall one to a worker,
as a load balancer in front of the service would spread them. gunicorn's own ``gthread``
keeps a connection alive only beyond ``worker_connections - threads``, which would close
every connection here after its request. Used by ``make bench`` only, for the floor and the
service alike."""

from __future__ import annotations

from typing import Any

from gunicorn.workers.gthread import ThreadWorker


class ThreadPerConnectionWorker(ThreadWorker):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.max_keepalived = self.worker_connections

    @classmethod
    def check_config(cls, cfg: Any, log: Any) -> None:
        """gthread warns that no connection can be kept alive; this worker keeps them."""
