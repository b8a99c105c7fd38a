"""A webhook receiver on 127.0.0.1 for the tests: it answers 500 to the first ``fail_first``
requests of each event, then 200 (after ``delay`` seconds), and records every request. It also
records when one delivery arrives while the same delivery is still being answered."""

from __future__ import annotations

import collections
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Receiver:
    def __init__(self, *, fail_first: int = 0, delay: float = 0.0) -> None:
        self.fail_first, self.delay = fail_first, delay
        self.lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []
        self.tries: collections.Counter[str] = collections.Counter()
        self.in_flight: set[str] = set()
        self.overlaps: list[str] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.handle(self, body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def handle(self, handler: BaseHTTPRequestHandler, body: bytes) -> None:
        event_id = handler.headers["Ledger-Event-Id"]
        delivery_id = handler.headers["Ledger-Delivery-Id"]
        with self.lock:
            if delivery_id in self.in_flight:
                self.overlaps.append(delivery_id)
            self.in_flight.add(delivery_id)
            self.tries[event_id] += 1
            failing = self.tries[event_id] <= self.fail_first
            self.requests.append(
                {"headers": dict(handler.headers), "body": body, "event": json.loads(body)}
            )
        time.sleep(self.delay)
        status = 500 if failing else 200
        handler.send_response(status)
        handler.send_header("Content-Type", "text/plain")
        handler.end_headers()
        handler.wfile.write(b"not yet" if failing else b"thanks")
        with self.lock:
            self.in_flight.discard(delivery_id)

    def accepted_events(self) -> set[str]:
        with self.lock:
            return {event_id for event_id, tries in self.tries.items() if tries > self.fail_first}

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
