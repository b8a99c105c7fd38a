"""Reading events in their order, and only those that can no longer be overtaken.

The order is ``(xid, seq)``: the id of the writing database transaction, then the row's
sequence number. On PostgreSQL a reader sees only events whose ``xid`` is below the oldest
transaction still running when its statement starts (``pg_snapshot_xmin``): every transaction
below that horizon has finished, so no event can commit later with a smaller key than one
already seen, and a client that resumes after its last cursor misses nothing and sees nothing
twice. (A reader also sees its own transaction's events, which matters only inside tests.)
On SQLite writers are serialized and ``xid`` is 0: ``seq`` is the commit order."""

from __future__ import annotations

from typing import Any

from django.db.models import Q, QuerySet
from django.db.models.expressions import RawSQL

from ledgerproject.db import by_database
from outbox.models import Event

HORIZON = "pg_snapshot_xmin(pg_current_snapshot())::text::bigint"
OWN_XID = "coalesce(pg_current_xact_id_if_assigned()::text::bigint, -1)"


def _visible_postgresql(queryset: QuerySet[Event]) -> QuerySet[Event]:
    return queryset.filter(Q(xid__lt=RawSQL(HORIZON, [])) | Q(xid=RawSQL(OWN_XID, [])))


def _visible_sqlite(queryset: QuerySet[Event]) -> QuerySet[Event]:
    return queryset  # writers are serialized: every committed event is in its place


visible = by_database(postgresql=_visible_postgresql, sqlite=_visible_sqlite)


def events_after(
    queryset: QuerySet[Event], cursor: tuple[int, int] | None, *, descending: bool = False
) -> QuerySet[Event]:
    """The visible events past ``cursor`` (``(xid, seq)``), in order."""
    return past(visible(queryset), cursor, descending=descending)


def past(
    queryset: QuerySet[Event], cursor: tuple[int, int] | None, *, descending: bool = False
) -> QuerySet[Event]:
    """The events past ``cursor`` in order, visible or not yet."""
    if cursor is not None:
        xid, seq = cursor
        if descending:
            queryset = queryset.filter(Q(xid__lt=xid) | Q(xid=xid, seq__lt=seq))
        else:
            queryset = queryset.filter(Q(xid__gt=xid) | Q(xid=xid, seq__gt=seq))
    order: list[Any] = ["-xid", "-seq"] if descending else ["xid", "seq"]
    return queryset.order_by(*order)
