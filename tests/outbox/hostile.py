"""Receivers on 127.0.0.1 that misbehave on purpose, written on raw sockets so that they can do
what no well-behaved HTTP server does: answer a byte a second, never answer, answer without
end, or hold the request until the test lets it go. Each records when every request arrived,
which delivery it carried, and how many bytes it managed to send back."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from typing import Any

OK = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 6\r\n\r\nthanks"


class Hostile:
    """``behaviour`` is ``ok``, ``drip`` (the answer a byte every ``pace`` seconds), ``hang``
    (reads the request, never answers), ``huge`` (a 200 whose body is ``size`` bytes, sent as
    fast as the peer reads), ``garbage`` (not HTTP) or ``hold`` (answers 200 once ``release``
    is set)."""

    def __init__(self, behaviour: str, *, pace: float = 1.0, size: int = 96 << 20) -> None:
        self.behaviour, self.pace, self.size = behaviour, pace, size
        self.release = threading.Event()
        self.arrived = threading.Event()
        self.lock = threading.Lock()
        self.arrivals: list[tuple[float, str]] = []  # (monotonic time, Ledger-Delivery-Id)
        self.heads: list[bytes] = []  # each request's line and headers, as received
        self.sent = 0
        self.closing = False
        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}/hook"
        self.threads: list[threading.Thread] = []

    def __enter__(self) -> Hostile:
        thread = threading.Thread(target=self._accept, daemon=True)
        thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.closing = True
        self.release.set()
        self.server.close()

    def _accept(self) -> None:
        while not self.closing:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            thread.start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            head = self._read_request(conn)
            delivery = ""
            for line in head.split(b"\r\n"):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"ledger-delivery-id":
                    delivery = value.strip().decode()
            with self.lock:
                self.arrivals.append((time.monotonic(), delivery))
                self.heads.append(head)
            self.arrived.set()
            # The worker closing the connection is what these receivers expect.
            with contextlib.suppress(OSError):
                getattr(self, f"_{self.behaviour}")(conn)

    def _read_request(self, conn: socket.socket) -> bytes:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return data
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        while len(body) < length:
            chunk = conn.recv(65536)
            if not chunk:
                break
            body += chunk
        return head

    def _ok(self, conn: socket.socket) -> None:
        conn.sendall(OK)

    def _garbage(self, conn: socket.socket) -> None:
        conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n\r\n")

    def _drip(self, conn: socket.socket) -> None:
        for byte in OK:
            if self.closing:
                return
            conn.sendall(bytes([byte]))
            with self.lock:
                self.sent += 1
            time.sleep(self.pace)

    def _hang(self, conn: socket.socket) -> None:
        self.release.wait(120)

    def _hold(self, conn: socket.socket) -> None:
        self.release.wait(120)
        conn.sendall(OK)

    def _huge(self, conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % self.size)
        chunk = b"x" * 65536
        while self.sent < self.size and not self.closing:
            conn.sendall(chunk)
            with self.lock:
                self.sent += len(chunk)


class Forwarder:
    """A TCP relay from ``port`` on 127.0.0.1 to ``target``: a broker that comes back when the
    relay starts, on a port where nothing listened before."""

    def __init__(self, port: int, target: tuple[str, int]) -> None:
        self.target = target
        self.server = socket.create_server(("127.0.0.1", port))
        self.closing = False

    def __enter__(self) -> Forwarder:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.closing = True
        self.server.close()

    def _accept(self) -> None:
        while not self.closing:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while chunk := source.recv(65536):
                sink.sendall(chunk)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                with contextlib.suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)
