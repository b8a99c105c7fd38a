"""The SQL of a posting: new transactions, their operations and the new balances, written
provided that the guard (``guards.Guard``) still holds. The rows travel as one JSON document
per table, each row an array of its values in column order (the function reads them by
position; the new balances are objects keyed by column): a few strings to send rather than an
array per column. The function's current text is the highest-numbered
``transactions/sql/ledger_write_posting.<NNNN>.sql``.

The postings' events (the outbox, ``outbox.events``) travel in the same call.

On PostgreSQL all of it is one call of a function (``ledger_write_posting``, made by a
migration): the guard, read after the balance locks (and holding the ledger with ``FOR KEY
SHARE``), then one plain statement per table, each of which Citus routes to the organization's
node (a data-modifying CTE, which did the same before, made Citus contact every worker).
Elsewhere (SQLite, whose writers are serialized anyway) the guard is one query per asset plus
one, then three plain statements."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any

from django.db import connection

from ledgerproject import jsonbytes
from ledgerproject.db import by_database, cursor, field_of, pg_array
from ledgerproject.formats import str_of
from organizations import monitors
from organizations.models import Balance
from outbox.events import event_rows_json
from outbox.models import Event
from transactions.guards import Guard, guard_refusal
from transactions.models import Operation, Transaction

TRANSACTION_COLUMNS = (
    "id", "created_at", "updated_at", "organization_id", "ledger_id", "parent_id", "is_reversal",
    "template_id", "type", "description", "status", "amount", "scale", "asset_code",
    "chart_of_accounts_group_name", "source", "destination", "metadata", "legs", "expires_at",
    "actor_kind", "actor_name", "actor_id", "request_id", "effective_at", "commit_at",
    "conversion",
)  # fmt: skip
OPERATION_COLUMNS = (
    "id", "created_at", "updated_at", "organization_id", "ledger_id", "transaction_id",
    "account_id", "account_alias", "portfolio_id", "type", "effect", "asset_code",
    "chart_of_accounts", "description", "amount", "scale", "balance_available",
    "balance_on_hold", "balance_scale", "balance_available_after", "balance_on_hold_after",
    "balance_scale_after", "balance_version", "metadata", "effective_at", "conversion",
)  # fmt: skip
BALANCE_STATE = ("available", "on_hold", "scale", "overdraft_limit", "version", "updated_at")

# One round trip: the function (transactions/sql/ledger_write_posting.*.sql) checks the guard,
# then writes the transactions, operations, events and balances, each as one statement; false,
# and nothing written, when the guard does not hold.
WRITE_POSTING = (
    "SELECT ledger_write_posting(%s, %s, %s::varchar[], %s::uuid[], %s::jsonb, %s::jsonb, "
    "%s::jsonb, %s::jsonb)"
)
UPDATE_BALANCE = (
    "UPDATE organizations_balance SET available = %s, on_hold = %s, scale = %s, "
    "overdraft_limit = %s, version = %s, updated_at = %s WHERE id = %s"
)


_TRANSACTION_VALUES = itemgetter(*TRANSACTION_COLUMNS)
_OPERATION_VALUES = itemgetter(*OPERATION_COLUMNS)
# The account too: the write updates only the balances of the accounts its guard names.
BALANCE_COLUMNS = ("id", "account_id", *BALANCE_STATE)


def _rows_json(rows: list[Any], values_of: Callable[[dict[str, Any]], tuple[Any, ...]]) -> str:
    """The rows as one JSON array of arrays, each row's values in its table's column order
    (``values_of`` picks them from the instance's attributes): one string to send instead of
    an array per column, and no column names (uuids and timestamps as text, amounts as exact
    numbers)."""
    out = []
    for row in rows:
        out.append(values_of(row.__dict__))
        row._state.adding = False
    return jsonbytes.row_text(out)


def _objects_json(rows: list[Any], columns: tuple[str, ...]) -> str:
    """The rows as one JSON array of objects keyed by column (``jsonb_to_recordset``): the
    new balances, whose update Citus accepts only in that form (migration 0013)."""
    out = []
    for row in rows:
        data = row.__dict__
        out.append({column: data[column] for column in columns})
    return jsonbytes.row_text(out)


def _write_postgresql(
    transactions: list[Transaction],
    operations: list[Operation],
    balances: list[Balance],
    *,
    guard: Guard,
    events: Sequence[Event] = (),
) -> bool:
    """Write it all if the guard holds; answer whether it did (nothing is written otherwise).
    ``events`` (the outbox rows of the postings) are written with it. On PostgreSQL one call of
    the write function (``sql/ledger_write_posting.NNNN.sql``), which checks the guard and
    writes everything in one round trip."""
    params = (
        str_of(guard.organization_id),
        str_of(guard.ledger_id),
        pg_array(guard.assets),
        pg_array(guard.account_ids),
        _rows_json(transactions, _TRANSACTION_VALUES),
        _rows_json(operations, _OPERATION_VALUES),
        event_rows_json(list(events)),
        _objects_json(balances, BALANCE_COLUMNS),
    )
    with cursor() as shared:
        shared.execute(WRITE_POSTING, params)
        return bool(shared.fetchone()[0])


def _write_sqlite(
    transactions: list[Transaction],
    operations: list[Operation],
    balances: list[Balance],
    *,
    guard: Guard,
    events: Sequence[Event] = (),
) -> bool:
    """SQLite has no server-side functions: the same guard (``guards.guard_refusal``), then a
    statement per table."""
    if guard_refusal(guard) is not None:
        return False
    Transaction.objects.bulk_create(transactions)
    Operation.objects.bulk_create(operations)
    if events:
        Event.objects.bulk_create(events)
    _update_balances(balances)
    return True


_write = by_database(postgresql=_write_postgresql, sqlite=_write_sqlite)


def write_posting(
    transactions: list[Transaction],
    operations: list[Operation],
    balances: list[Balance],
    *,
    guard: Guard,
    events: Sequence[Event] = (),
) -> bool:
    """Write it all if the guard holds; answer whether it did (nothing is written otherwise).
    The monitors of the balances (``organizations.monitors``) see the operations first: what
    they fire is written with the rest, and what they saw is kept once it is written."""
    crossings = monitors.crossings(balances, operations)
    events = [*events, *crossings.events] if crossings.events else events
    written = _write(transactions, operations, balances, guard=guard, events=events)
    if written and crossings.changed:
        crossings.save()
    return written


def _update_balances(rows: list[Balance]) -> None:
    """One prepared statement run for each locked balance row (off PostgreSQL)."""
    fields = [field_of(Balance, name) for name in BALANCE_STATE]
    pk = Balance._meta.pk
    assert pk is not None
    with cursor() as shared:
        shared.executemany(
            UPDATE_BALANCE,
            [
                [f.get_db_prep_save(getattr(b, f.attname), connection) for f in fields]
                + [pk.get_db_prep_save(b.pk, connection)]
                for b in rows
            ],
        )
