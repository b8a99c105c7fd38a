"""The bench's gunicorn worker: ``gthread`` that holds one kept-alive connection per thread. A
``gthread`` worker accepts every connection it can: with 12 one-thread workers and 12 wrk
connections, a worker that took two served them in turn while another sat idle. This one stops
accepting once each thread has one (``--worker-connections`` = ``--threads``) and keeps them
alive, so the connections fall one to a worker, as a load balancer would spread them."""

from __future__ import annotations

from typing import Any

from gunicorn.workers.gthread import ThreadWorker  # type: ignore[import-untyped]


class ThreadPerConnectionWorker(ThreadWorker):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.max_keepalived = self.worker_connections

    @classmethod
    def check_config(cls, cfg: Any, log: Any) -> None:
        """gthread warns that no connection can be kept alive; this worker keeps them."""
