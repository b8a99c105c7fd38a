"""Who does what: the actor, request id and client address of the work in progress.

Every write records them (a transaction's columns, every event's), read from here:

- an API request: the token (``kind`` ``token``, its name and id), set once the token is
  authenticated (``ledgerproject.api.authentication``);
- an admin request: the staff user (``staff``, the username and user id);
- a command: ``command``, its name, and the operating-system user who ran it as the id
  (``manage.py``);
- anything else (the journal's sealer, a test calling a service): ``system``.

Staff give a reason for what moves money in the back office (a posting, a commit, a cancel,
a revert, an expiry) and for what stops it (an account's status, a ledger's period):
``with actors.reason(text):`` around the change, and every event the change writes keeps it
beside the actor: the action's own, the transactions' it posts, and a balance monitor's that it
triggers. An API request gives none.

A request's id is the ``X-Request-Id`` it was sent with when that is a plain token of at most
``MAX_REQUEST_ID`` characters, else one made here; every answer carries it back
(``RequestMiddleware``). The client address is the connection's (``REMOTE_ADDR``): behind a
proxy, the proxy's, unless the proxy rewrites it (docs/OPERATORS.md)."""

from __future__ import annotations

import contextvars
import dataclasses
import ipaddress
import os
import pwd
import re
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest, HttpResponse

MAX_REQUEST_ID = 128
REQUEST_ID = re.compile(rf"[A-Za-z0-9._:/+=-]{{1,{MAX_REQUEST_ID}}}")
HEADER = "X-Request-Id"


@dataclass(frozen=True)
class Actor:
    kind: str  # one of KINDS
    name: str
    id: str | None = None


KINDS = ("token", "staff", "command", "system")
SYSTEM = Actor("system", "ledger service")


MAX_REASON = 500


@dataclass
class Work:
    actor: Actor = SYSTEM
    request_id: str = ""
    client_address: str | None = None
    reason: str | None = None


_current: contextvars.ContextVar[Work | None] = contextvars.ContextVar("work", default=None)
_process = Work()  # a command's, for the whole process


def current() -> Work:
    return _current.get() or _process


def actor_of(row: Any) -> dict[str, Any]:
    """The actor a row (a transaction, an event) records, as the API answers it."""
    return {"kind": row.actor_kind, "name": row.actor_name, "id": row.actor_id}


def stamp() -> dict[str, Any]:
    """The columns a written row keeps of the work that wrote it (a transaction's, an
    event's)."""
    work = current()
    return {
        "actor_kind": work.actor.kind,
        "actor_name": work.actor.name,
        "actor_id": work.actor.id,
        "request_id": work.request_id,
    }


def work_of(row: Any) -> Work:
    """The work a row recorded (``stamp``'s columns), to act as it again: a scheduled posting
    is made as whoever scheduled it."""
    return Work(Actor(row.actor_kind, row.actor_name, row.actor_id), row.request_id)


def act_as(actor: Actor) -> None:
    """The actor of the request in progress from now on, once it is known; outside a request,
    nothing (a process's own actor is set once, by ``as_command``)."""
    work = _current.get()
    if work is not None:
        work.actor = actor


@contextmanager
def working(work: Work) -> Iterator[Work]:
    token = _current.set(work)
    try:
        yield work
    finally:
        _current.reset(token)


@contextmanager
def reason(text: str) -> Iterator[None]:
    """The reason given for what the block does (at most ``MAX_REASON`` characters)."""
    if not 0 < len(text) <= MAX_REASON:
        raise ValueError(f"a reason has 1 to {MAX_REASON} characters")
    # A copy for the block: outside a request the work is the process's, shared by its threads.
    with working(dataclasses.replace(current(), reason=text)):
        yield


def as_command(argv: list[str]) -> None:
    """``manage.py <name> ...``: the process acts as the command, run by its OS user."""
    name = argv[1] if len(argv) > 1 else "manage.py"
    try:  # the account the process runs as, not what LOGNAME or USER say
        user: str | None = pwd.getpwuid(os.geteuid()).pw_name[:64]
    except (KeyError, OSError):
        user = None
    _process.actor = Actor("command", name[:100], user)
    _process.request_id = new_request_id()


def new_request_id() -> str:
    return uuid.uuid4().hex


def request_id_of(request: HttpRequest) -> str:
    sent = request.headers.get(HEADER, "")
    return sent if REQUEST_ID.fullmatch(sent) else new_request_id()


def address_of(request: HttpRequest) -> str | None:
    """The connection's address; none when the server gives something else (a Unix socket's
    empty name)."""
    address = request.META.get("REMOTE_ADDR", "").partition("%")[0]  # no IPv6 zone
    try:
        return str(ipaddress.ip_address(address))
    except ValueError:
        return None


class RequestMiddleware:
    """First of all middleware: gives each request its id and client address for as long as it
    runs, and answers with its ``X-Request-Id`` (redirects and refusals of other middleware
    included)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        work = Work(
            actor=SYSTEM, request_id=request_id_of(request), client_address=address_of(request)
        )
        with working(work):
            response = self.get_response(request)
        response[HEADER] = work.request_id
        return response


class StaffMiddleware:
    """After Django's authentication: an admin request acts as its staff user."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path_info.startswith("/admin/") and request.user.is_authenticated:
            user = request.user
            act_as(Actor("staff", user.get_username()[:100], str(user.pk)))
        return self.get_response(request)
