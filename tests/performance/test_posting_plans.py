"""PostgreSQL plans the posting's statements once per connection, not once per posting.

A statement prepared on a connection (psycopg prepares it at its fifth run) is planned for its
parameters ("custom") five times; after that PostgreSQL keeps a generic plan when it does not
look dearer. An array parameter of unknown length looks like ten elements to the planner, so a
statement reading two accounts by ``= ANY($3)`` never did, and was planned again on every
posting. Written ``ARRAY[$3, $4]`` (``db.ArrayParam``), its length is plain to
see and the generic plan is kept."""

from __future__ import annotations

from django.db import connection

from organizations.contents import account_create
from organizations.models import Ledger
from tests.conftest import requires_postgres

pytestmark = requires_postgres()

ACCOUNTS = 500
# One statement reads a posting's accounts and locks their balances (``lookups.lock_accounts``).
STATEMENTS = {"accounts and balance locks": "JOIN organizations_balance b ON"}


def _plans() -> dict[str, tuple[int, int]]:
    """``{name: (generic plans, custom plans)}`` of the posting's prepared statements."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements")
        rows = cursor.fetchall()
    found: dict[str, tuple[int, int]] = {}
    for name, marker in STATEMENTS.items():
        matching = [(g, c) for text, g, c in rows if marker in text and "ARRAY[$" in text]
        assert len(matching) == 1, (name, [r[0][:120] for r in rows])
        found[name] = matching[0]
    return found


def _sized(book) -> None:
    """A ledger of some size, as PostgreSQL knows it (with three accounts, any plan is cheap)."""
    ledger = Ledger.objects.get(pk=book.url.rsplit("/", 1)[1])
    for n in range(ACCOUNTS):
        account_create(ledger=ledger, asset_code="BRL", alias=f"@a{n}")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE organizations_account, organizations_balance")


def test_the_accounts_and_the_balance_locks_are_not_planned_again(book):
    _sized(book)
    book.fund("@alice", 1_000_000)
    for _ in range(12):  # prepared at the fifth run, then planned for its values five times
        assert book.pay(10, 0).status_code == 201
    before = _plans()
    for _ in range(10):
        assert book.pay(10, 0).status_code == 201
    after = _plans()
    for name in STATEMENTS:
        generic = after[name][0] - before[name][0]
        custom = after[name][1] - before[name][1]
        assert (generic, custom) == (10, 0), (name, before[name], after[name])


def _balance_scans() -> tuple[int, int]:
    """Sequential scans and updated rows of the balance table in this test's database
    transaction so far (the postings run inside it)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT seq_scan, n_tup_upd FROM pg_stat_xact_user_tables "
            "WHERE relname = 'organizations_balance'"
        )
        scans, updated = cursor.fetchone()
    return scans, updated


def test_the_usual_postings_balances_are_updated_through_an_index(book):
    # Before migration 0010 the write function's balance update, a join with the rows sent,
    # scanned every balance of the table on each posting: the planner takes the rows sent for a
    # hundred, and a hash join over the whole table for cheaper than two index lookups.
    _sized(book)
    for n in range(12):  # warm: prepared, then planned for its values five times
        book.fund(f"@a{n}", 100)
    scans, updated = _balance_scans()
    for n in range(10):
        book.fund(f"@a{n}", 100)  # two accounts, one asset: the usual form
    after_scans, after_updated = _balance_scans()
    assert after_updated - updated == 20  # the counts are current: two balances a posting
    assert after_scans - scans == 0
