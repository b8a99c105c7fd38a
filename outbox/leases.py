"""Named rows that order the worker processes: a *lease* one process holds for a while (the
RabbitMQ publisher, so that one process publishes at a time and in order), and a *lock* held
until the end of the current database transaction (a check-then-write that must not race, such
as the bound on an organization's subscriptions). One row per name, created on first use."""

from __future__ import annotations

import datetime as dt
import uuid

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from outbox.models import Lease

# This process, as a lease's holder.
PROCESS = uuid.uuid4()


def _row(name: str) -> None:
    Lease.objects.get_or_create(
        name=name, defaults={"holder": PROCESS, "expires_at": timezone.now()}
    )


def take(name: str, *, seconds: float, holder: uuid.UUID = PROCESS) -> bool:
    """Hold (or renew) the lease ``name`` for ``seconds``; False while another holder's runs."""
    _row(name)
    now = timezone.now()
    return bool(
        Lease.objects.filter(name=name)
        .filter(Q(holder=holder) | Q(expires_at__lte=now))
        .update(holder=holder, expires_at=now + dt.timedelta(seconds=seconds))
    )


def release(name: str, *, holder: uuid.UUID = PROCESS) -> None:
    """Let another holder take the lease at once (a clean stop)."""
    Lease.objects.filter(name=name, holder=holder).update(expires_at=timezone.now())


def lock(name: str) -> None:
    """Lock the row ``name`` until the current database transaction ends."""
    assert transaction.get_connection().in_atomic_block, "a lock outside a transaction"
    _row(name)
    Lease.objects.select_for_update().filter(name=name).first()
