"""gunicorn for the bench: threaded workers (keep-alive, so the load generator reuses its
connections), one connection per thread (``bench/gunicorn_worker.py``), no access log. Sized
for this 2-core machine by BENCH_WORKERS/BENCH_THREADS."""

import os

bind = os.environ.get("BENCH_BIND", "127.0.0.1:8150")
worker_class = "bench.gunicorn_worker.ThreadPerConnectionWorker"
workers = int(os.environ.get("BENCH_WORKERS", "12"))
threads = int(os.environ.get("BENCH_THREADS", "1"))
worker_connections = threads
keepalive = 30
backlog = 2048
preload_app = True
accesslog = None
errorlog = os.environ.get("BENCH_ERRORLOG", "-")
loglevel = "warning"
graceful_timeout = 5
