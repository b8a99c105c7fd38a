"""The books against their journal: each transaction, account and template of a ledger as it
is stored now, against the latest journal entry about it (its latest event's rendering).

A change made behind the service's back (a description rewritten, an operation's amount, an
account's status) leaves the books differing from the journal, whose entries are fixed by
their blocks' hashes (``journal.verify``). Every field an entry holds is compared; a field the
rendering gained after the entry was written is not (an entry is never rewritten), nor is one
its operations gained. Two things
change without an event of their own and are read as the journal implies: a transaction's
cancellation (the ``transaction.canceled`` entry of its cancelling transaction makes it
CANCELED, at that transaction's time), and an account's balance, which its operations carry
(the other checks hold those), so an account's ``balance`` is not compared and its overdraft
limit is compared by value, whatever scale the balance now has. A
``transaction.commit_failed`` entry holds the transaction and, beside it, the ``error`` its
commit was refused with, which is not compared. Read a slice at a time: linear in the
ledger's size."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

from django.db.models import Model, Prefetch, QuerySet

from journal.selectors import latest_entries
from journal.services import entries
from journal.verify import capped
from ledgerproject.amounts import rescale
from organizations.models import Account, Ledger
from outbox import events
from outbox.models import Event
from templates_dsl.models import TransactionTemplate
from transactions.models import Operation, Transaction
from transactions.rendering import transaction_data

SLICE = 500
_ABSENT = object()


def check_books_match_journal(ledger: Ledger) -> list[str]:
    scope = {"organization_id": ledger.organization_id, "ledger_id": ledger.pk}
    found: list[str] = []
    transactions = Transaction.objects.filter(**scope).prefetch_related(
        Prefetch("operations", queryset=Operation.objects.order_by("id"))
    )
    for rows in _slices(transactions):
        cancelled = _cancellations(ledger, rows)
        found += _compare(ledger, "transaction", rows, transaction_data, cancelled)
    found += _removed(ledger, "transaction", Transaction.objects.filter(**scope))
    resources: list[tuple[QuerySet[Any], str]] = [
        (Account.objects.filter(**scope).select_related("balance"), "account"),
        (TransactionTemplate.objects.filter(**scope), "template"),
    ]
    for queryset, noun in resources:
        for rows in _slices(queryset):
            found += _compare(ledger, noun, rows, events.rendering, {})
        found += _removed(ledger, noun, queryset)
    return capped(found)


def _removed(ledger: Ledger, noun: str, rows: QuerySet[Any]) -> list[str]:
    """The resources the journal has entries about that are no longer stored. Counted first
    (one query each side); named only when the counts differ."""
    about = (
        entries(ledger.organization_id, ledger.pk)
        .filter(type__startswith=f"{noun}.")
        .order_by()
        .values_list("resource_id", flat=True)
        .distinct()
    )
    if about.count() <= rows.count():
        return []
    found, chunk = [], []
    for resource_id in about.iterator(chunk_size=SLICE):
        chunk.append(resource_id)
        if len(chunk) == SLICE:
            found += _missing(noun, rows, chunk)
            chunk = []
    return found + _missing(noun, rows, chunk)


def _missing(noun: str, rows: QuerySet[Any], ids: list[uuid.UUID]) -> list[str]:
    stored = set(rows.filter(pk__in=ids).values_list("pk", flat=True))
    return [f"{noun} {pk}: in the journal, but no longer stored" for pk in ids if pk not in stored]


def _slices(queryset: QuerySet[Any]) -> Iterator[list[Any]]:
    last = None
    while True:
        page = queryset.order_by("pk")
        if last is not None:
            page = page.filter(pk__gt=last)
        rows = list(page[:SLICE])
        if not rows:
            return
        yield rows
        last = rows[-1].pk


def _cancellations(ledger: Ledger, rows: list[Transaction]) -> dict[uuid.UUID, Event]:
    """For each transaction of ``rows`` that a cancellation cancelled: that cancellation's
    entry."""
    children = dict(
        Transaction.objects.filter(
            organization_id=ledger.organization_id,
            parent_id__in=[t.pk for t in rows],
            is_reversal=True,
        ).values_list("id", "parent_id")
    )
    cancelling = entries(ledger.organization_id, ledger.pk).filter(
        type=events.TRANSACTION_CANCELED, resource_id__in=list(children)
    )
    return {children[e.resource_id]: e for e in cancelling}


def _compare(
    ledger: Ledger,
    noun: str,
    rows: list[Model],
    render: Any,
    cancelled: dict[uuid.UUID, Event],
) -> list[str]:
    latest = latest_entries(ledger.organization_id, ledger.pk, [row.pk for row in rows])
    found = []
    for row in rows:
        entry = latest.get(row.pk)
        if entry is None:
            found.append(f"{noun} {row.pk}: has no journal entry")
            continue
        expected = dict(entry.data)
        if entry.type == events.TRANSACTION_COMMIT_FAILED:
            expected.pop("error", None)  # why the commit was refused, beside the transaction
        by = cancelled.get(row.pk)
        if by is not None:
            expected.update(status=Transaction.CANCELED, updatedAt=by.data["updatedAt"])
        if entry.type.endswith(".deleted") != (getattr(row, "deleted_at", None) is not None):
            state = "deleted" if entry.type.endswith(".deleted") else "not deleted"
            found.append(f"{noun} {row.pk}: its journal entry has it {state}")
            continue
        current = render(row)
        differing = [
            k
            for k in expected
            if _value(k, _as_entry_has_it(current.get(k, _ABSENT), expected[k]))
            != _value(k, expected[k])
        ]
        if differing:
            found.append(
                f"{noun} {row.pk}: {', '.join(sorted(differing))} no longer as its journal "
                f"entry has it (event {entry.event_id})"
            )
    return found


def _as_entry_has_it(current: Any, entry: Any) -> Any:
    """The operations of the rendering now, each with only the fields the entry's have: an
    entry written before the rendering gained a field does not hold it."""
    if not (isinstance(current, list) and isinstance(entry, list)):
        return current
    fields = {k for op in entry if isinstance(op, dict) for k in op}
    if not fields:
        return current
    return [
        {k: v for k, v in op.items() if k in fields} if isinstance(op, dict) else op
        for op in current
    ]


def _value(key: str, value: Any) -> Any:
    """A field as compared: operations by id; an overdraft limit by value; no balance."""
    if key == "balance":
        return None
    if key == "operations" and isinstance(value, list):
        return sorted(value, key=lambda op: str(op.get("id")))
    if key == "overdraftLimit" and isinstance(value, dict):
        return rescale(value["amount"], value["scale"], 18)
    return value
