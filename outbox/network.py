"""One webhook request over the network: where it may go, one deadline, a bound on what is read.

Nothing here touches the database, so nothing here can hold a transaction or a row lock while
it waits on a receiver.

- **Where**: the host is resolved and every address it resolves to must be public
  (``refusal``); an IPv6 address that carries an IPv4 address (IPv4-mapped, IPv4-compatible,
  NAT64, 6to4, Teredo) is judged by that IPv4 address too. The request then goes to one of the
  addresses that were checked, never to a second resolution of the name, so a DNS answer that
  changes between the check and the connection cannot send it elsewhere.
- **One deadline** for the whole exchange: resolving, connecting, the TLS handshake, sending
  and reading. Every socket call is given only the time left, so a receiver that trickles its
  answer a byte at a time is cut off at the deadline like one that never answers.
- **A bound**: at most ``MAX_ANSWER_BYTES`` of the answer (status line, headers and body
  together) are read; then the connection is closed. The status decides success; the first
  ``KEPT_CHARACTERS`` of the body are kept for people to read."""

from __future__ import annotations

import concurrent.futures
import ipaddress
import socket
import ssl
import threading
import time
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import quote, urlsplit

import h11

MAX_ANSWER_BYTES = 16 * 1024
KEPT_CHARACTERS = 2000
USER_AGENT = "ledger-webhooks/1"
# What a path or query keeps as it is: the characters RFC 3986 allows there, and "%" (already
# percent-encoded text stays as it was sent).
URL_SAFE = "/%:@!$&'()*+,;=-._~"

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")  # RFC 8215: local use, never public
_COMPATIBLE = ipaddress.ip_network("::/96")  # the deprecated IPv4-compatible form, ::a.b.c.d
_TRANSLATED = ipaddress.ip_network(
    "::ffff:0:0:0/96"
)  # SIIT's IPv4-translated form, ::ffff:0:a.b.c.d

_tls = ssl.create_default_context()


class Refused(Exception):
    """The destination may not be called; the message says why, for people."""


class Unresolved(Refused):
    """The host's name does not resolve."""


@dataclass(frozen=True)
class Answer:
    """What came of one request: a status, or an error; ``refused`` when nothing was sent."""

    status_code: int | None = None
    body: str = ""
    error: str = ""
    refused: bool = False
    duration_ms: int = 0

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


def embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address carries, by every form that carries one."""
    found = []
    if address.ipv4_mapped is not None:
        found.append(address.ipv4_mapped)
    if address in _COMPATIBLE or address in _NAT64 or address in _TRANSLATED:
        found.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    if address.sixtofour is not None:
        found.append(address.sixtofour)
    if address.teredo is not None:
        found.extend(address.teredo)  # the Teredo server and the client behind it
    return found


def refusal(address: IPAddress) -> str | None:
    """Why a webhook may not be sent to this address, or None when it may: loopback, private,
    link-local (cloud metadata at 169.254.169.254), shared, reserved, unspecified and multicast
    addresses are refused, directly or carried inside an IPv6 address."""
    if isinstance(address, ipaddress.IPv6Address):
        for inner in embedded_ipv4(address):
            if not inner.is_global or inner.is_multicast:
                return f"a non-public address ({address}, which carries {inner})"
        if address in _NAT64_LOCAL or address.is_site_local:
            return f"a non-public address ({address})"
    if not address.is_global or address.is_multicast:
        return f"a non-public address ({address})"
    return None


def _left(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("the deadline passed")
    return left


def resolve(host: str, port: int, *, deadline: float) -> list[IPAddress]:
    """The addresses of ``host``, in the resolver's order; raises ``Refused`` when it does not
    resolve and ``TimeoutError`` when the resolver does not answer in time."""
    try:
        return [ipaddress.ip_address(host.strip("[]"))]
    except ValueError:
        pass
    # Name resolution takes no timeout of its own: it runs on a thread of its own (never a
    # shared pool, where one receiver's name server that never answers would hold every other
    # lookup in the queue), and the caller waits only for the time it has left. A lookup that
    # outlives its caller ends on that thread when the system resolver gives up.
    lookup: concurrent.futures.Future[list[Any]] = concurrent.futures.Future()

    def run() -> None:
        try:
            lookup.set_result(socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP))
        except BaseException as error:  # noqa: BLE001 - handed to the caller, whatever it is
            lookup.set_exception(error)

    threading.Thread(target=run, name="resolve", daemon=True).start()
    try:
        infos = lookup.result(timeout=_left(deadline))
    except concurrent.futures.TimeoutError:
        raise TimeoutError("the host's name did not resolve in time") from None
    except (OSError, UnicodeError) as error:  # UnicodeError: a name IDNA cannot encode
        raise Unresolved(f"the host does not resolve ({error})") from None
    addresses: list[IPAddress] = []
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%")[0])
        if address not in addresses:
            addresses.append(address)
    return addresses


def destinations(url: str, *, deadline: float, allow_private: bool) -> list[IPAddress]:
    """The addresses a request to ``url`` may be sent to: all of the host's, once each is
    checked. Raises ``Refused`` when any of them is not public (unless ``allow_private``): a
    name that answers with a public and a private address is refused whichever comes first."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    addresses = resolve(parts.hostname or "", port, deadline=deadline)
    if not addresses:
        raise Unresolved("the host does not resolve")
    if not allow_private:
        for address in addresses:
            reason = refusal(address)
            if reason is not None:
                raise Refused(f"the host resolves to {reason}")
    return addresses


def post(
    url: str, body: bytes, headers: list[tuple[str, str]], *, timeout: float, allow_private: bool
) -> Answer:
    """POST ``body`` to ``url`` within ``timeout`` seconds in all; never raises for anything
    the network or the receiver does."""
    started = time.monotonic()
    answer = _answer(url, body, headers, started + timeout, timeout, allow_private)
    return replace(answer, duration_ms=int((time.monotonic() - started) * 1000))


def _answer(
    url: str,
    body: bytes,
    headers: list[tuple[str, str]],
    deadline: float,
    timeout: float,
    allow_private: bool,
) -> Answer:
    try:
        addresses = destinations(url, deadline=deadline, allow_private=allow_private)
    except Refused as refused:
        return Answer(error=f"Not sent: {refused}.", refused=True)
    except TimeoutError:
        return Answer(error=f"Timed out: the host did not resolve within {timeout:g} s.")
    try:
        status, kept = _exchange(url, addresses, body, headers, deadline)
    except TimeoutError:
        return Answer(error=f"Timed out: no complete answer within {timeout:g} s.")
    except h11.RemoteProtocolError as error:
        return Answer(error=f"The answer is not valid HTTP: {error}"[:KEPT_CHARACTERS])
    except OSError as error:  # ssl.SSLError included
        return Answer(error=f"{type(error).__name__}: {error}"[:KEPT_CHARACTERS])
    if status is None:
        return Answer(error="The receiver closed the connection before its status line.")
    return Answer(status_code=status, body=kept)


def _connect(addresses: list[IPAddress], port: int, deadline: float) -> socket.socket:
    error: OSError = OSError("no address to connect to")
    for address in addresses:
        try:
            return socket.create_connection((str(address), port), timeout=_left(deadline))
        except TimeoutError:
            raise
        except OSError as failed:
            error = failed
    raise error


def _exchange(
    url: str,
    addresses: list[IPAddress],
    body: bytes,
    headers: list[tuple[str, str]],
    deadline: float,
) -> tuple[int | None, str]:
    """(status, the start of the body) of one request; ``TimeoutError`` past the deadline."""
    parts = urlsplit(url)
    tls = parts.scheme.lower() == "https"
    port = parts.port or (443 if tls else 80)
    # A name in Unicode travels as IDNA (checked by check_url), a path or query in Unicode
    # percent-encoded, as a browser sends them: HTTP/1.1 carries ASCII.
    host = (parts.hostname or "").encode("idna").decode("ascii")
    authority = host if ":" not in host else f"[{host}]"
    if parts.port is not None:
        authority += f":{parts.port}"
    target = quote(parts.path or "/", safe=URL_SAFE) + (
        f"?{quote(parts.query, safe=URL_SAFE + '?')}" if parts.query else ""
    )
    sock = _connect(addresses, port, deadline)
    try:
        if tls:
            # The handshake is one call: its timeout bounds it whole.
            sock.settimeout(_left(deadline))
            sock = _tls.wrap_socket(sock, server_hostname=host)
        http = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_ANSWER_BYTES)
        request = h11.Request(
            method="POST",
            target=target,
            headers=[
                ("Host", authority),
                ("User-Agent", USER_AGENT),
                ("Content-Length", str(len(body))),
                ("Connection", "close"),
                *headers,
            ],
        )
        out = http.send(request) + http.send(h11.Data(data=body)) + http.send(h11.EndOfMessage())
        sock.settimeout(_left(deadline))
        sock.sendall(out)  # one call, one timeout for all of it
        return _read_answer(sock, http, deadline)
    finally:
        sock.close()


def _read_answer(
    sock: socket.socket, http: h11.Connection, deadline: float
) -> tuple[int | None, str]:
    status: int | None = None
    kept = bytearray()
    read = 0
    while True:
        try:
            event = http.next_event()
        except h11.RemoteProtocolError:
            if status is None:
                raise
            break  # the status is in; what went wrong after it does not change it
        if event is h11.NEED_DATA:
            if read >= MAX_ANSWER_BYTES:
                break
            sock.settimeout(_left(deadline))
            chunk = sock.recv(min(4096, MAX_ANSWER_BYTES - read))
            read += len(chunk)
            http.receive_data(chunk)  # b"" is the end of the stream
        elif isinstance(event, h11.Response):
            status = event.status_code
        elif isinstance(event, h11.Data):
            kept += event.data[: KEPT_CHARACTERS - len(kept)]
        elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
            break
    return status, bytes(kept).decode("utf-8", "replace")[:KEPT_CHARACTERS]
