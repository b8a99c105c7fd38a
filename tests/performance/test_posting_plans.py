"""PostgreSQL plans the posting's statements once per connection, not once per posting.

A statement prepared on a connection (psycopg prepares it at its fifth run) is planned for its
parameters ("custom") five times; after that PostgreSQL keeps a generic plan when it does not
look dearer. An array parameter of unknown length looks like ten elements to the planner, so a
statement reading two accounts by ``= ANY($3)`` never did, and was planned again on every
posting. Written ``ARRAY[$3, $4]`` (``db.ArrayParam``), its length is plain to
see and the generic plan is kept."""

from __future__ import annotations

from django.db import connection
from django.test.utils import CaptureQueriesContext

from organizations.contents import account_create
from organizations.models import Account, Ledger
from organizations.monitors import monitor_create
from tests.conftest import requires_postgres

pytestmark = requires_postgres()

ACCOUNTS = 500
# One statement reads a posting's accounts and locks their balances (``lookups.lock_accounts``).
STATEMENTS = {"accounts and balance locks": "AS wanted(alias)"}


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
        book.fund(f"@a{n}", 100)  # two accounts, one asset
    after_scans, after_updated = _balance_scans()
    assert after_updated - updated == 20  # the counts are current: two balances a posting
    assert after_scans - scans == 0


def _lock_scans(book) -> list[tuple[str, str, int]]:
    """``(table, index, rows removed by a filter)`` of each scan of an account or a balance in
    the plan of the statement that locks a posting's balances, run on a posting's values."""
    with CaptureQueriesContext(connection) as queries:
        assert book.pay(10, 0).status_code == 201
    (sql,) = [q["sql"] for q in queries.captured_queries if "AS wanted(alias)" in q["sql"]]
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}")
        (plan,) = cursor.fetchone()[0]
    found, nodes = [], [plan["Plan"]]
    while nodes:
        node = nodes.pop()
        nodes.extend(node.get("Plans", ()))
        table = node.get("Relation Name", "")
        if table in ("organizations_account", "organizations_balance"):
            removed = node.get("Rows Removed by Filter", 0) + node.get(
                "Rows Removed by Index Recheck", 0
            )
            found.append((table, node.get("Index Name", node["Node Type"]), removed))
    return sorted(found)


# One scan of each (repeated per alias), each by the whole of a unique key, no row read for
# nothing: the account by its active alias, its balance's id by the account, the balance locked
# by its id.
LOCKED_BY_UNIQUE_KEYS = [
    ("organizations_account", "account_alias_active_uniq", 0),
    ("organizations_balance", "balance_account_uniq", 0),
    ("organizations_balance", "transactions_balance_pkey", 0),
]


def test_the_locking_statement_reads_by_unique_keys_with_or_without_statistics(book):
    # Without statistics (a new deployment's tables until something analyzes them) PostgreSQL
    # clamps every estimate to one row and chose the smallest index: the ledger's
    # (ledger_id, asset_code) for the accounts, the primary key's organization prefix for the
    # balances, visiting every account of the ledger and every balance of the organization on
    # each posting. The accounts created in this test's transaction are in no statistics.
    ledger = Ledger.objects.get(pk=book.url.rsplit("/", 1)[1])
    for n in range(ACCOUNTS):
        account_create(ledger=ledger, asset_code="BRL", alias=f"@a{n}")
    book.fund("@alice", 1_000_000)
    assert _lock_scans(book) == LOCKED_BY_UNIQUE_KEYS
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE organizations_account, organizations_balance")
    assert _lock_scans(book) == LOCKED_BY_UNIQUE_KEYS


def _rows_read(tables: tuple[str, ...] = ("organizations_account", "organizations_balance")):
    """Rows of these tables read in this test's database transaction so far, by any scan (the
    postings run inside it)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relname, coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) "
            "FROM pg_stat_xact_user_tables WHERE relname = ANY(%s)",
            [list(tables)],
        )
        return dict(cursor.fetchall())


def test_a_posting_reads_only_its_own_accounts_and_balances_without_statistics(book):
    # Every statement of a posting (the locking one and the write function's) finds its rows
    # by the whole of a unique key. Matched as a list (= ANY, IN) on tables never analyzed,
    # the write function's balance update and deleted-account check read every balance and
    # account of the organization on each posting.
    ledger = Ledger.objects.get(pk=book.url.rsplit("/", 1)[1])
    for n in range(ACCOUNTS):
        account_create(ledger=ledger, asset_code="BRL", alias=f"@a{n}")
    book.fund("@alice", 1_000_000)
    for _ in range(12):  # prepared, then planned for its values five times
        assert book.pay(10, 0).status_code == 201
    before = _rows_read()
    for _ in range(10):
        assert book.pay(10, 0).status_code == 201
    after = _rows_read()
    per_posting = {table: (after[table] - before[table]) / 10 for table in after}
    assert all(rows <= 12 for rows in per_posting.values()), per_posting
    # A commit locks the balances it changes by their accounts (``locking.lock_balances``).
    held = [book.pay(10, 0, pending=True).json()["id"] for _ in range(10)]
    before = _rows_read()
    for tx_id in held:
        assert book.api.post(f"{book.url}/transactions/{tx_id}/commit").status_code == 200
    after = _rows_read()
    per_commit = {table: (after[table] - before[table]) / 10 for table in after}
    assert all(rows <= 12 for rows in per_commit.values()), per_commit


def _plan_of(sql: str) -> dict:
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (FORMAT JSON) {sql}")
        (plan,) = cursor.fetchone()[0]
    return plan["Plan"]


def _nodes(node: dict) -> list[dict]:
    return [node, *(n for child in node.get("Plans", ()) for n in _nodes(child))]


def _unordered_locks(node: dict, ordered: bool = False) -> int:
    """Row locks (LockRows) not taken in the inner side of a nested loop whose outer side is
    sorted by ``balance_id`` (or, for tree monitors, the id of a row of ``found``): the inner
    side runs once per outer row, in that order (``locking.EACH_BALANCE_LOCKED``,
    ``monitors.LOCK_WATCHERS``).
    The plan shows that sort's key as the scalar subquery that finds the id (``(SubPlan 1)``)
    when the subquery's own sort is merged into it."""
    unordered = int(node["Node Type"] == "LockRows" and not ordered)
    children = node.get("Plans", [])
    if node["Node Type"] == "Nested Loop" and len(children) == 2:
        outer, inner = children
        by_balance_id = any(
            n["Node Type"] == "Sort"
            and any(
                k in " ".join(n.get("Sort Key", [])) for k in ("balance_id", "SubPlan", "found")
            )
            for n in _nodes(outer)
        )
        inner_unordered = _unordered_locks(inner, ordered or by_balance_id)
        return unordered + _unordered_locks(outer, ordered) + inner_unordered
    return unordered + sum(_unordered_locks(child, ordered) for child in children)


def _locking_statements(book, act) -> list[str]:
    with CaptureQueriesContext(connection) as queries:
        act()
    return [q["sql"] for q in queries.captured_queries if "FOR UPDATE) b ORDER BY b.id" in q["sql"]]


def test_balances_are_locked_in_balance_id_order(book):
    # Two accounts whose balances' ids are in the reverse order of their aliases: locked in
    # the aliases' order, two postings between them could deadlock.
    ledger = Ledger.objects.get(pk=book.url.rsplit("/", 1)[1])
    for alias in ("@zz-first", "@aa-second"):
        account_create(ledger=ledger, asset_code="BRL", alias=alias)
    book.fund("@zz-first", 1_000)
    posting = _locking_statements(book, lambda: book.pay(10, 0, "@zz-first", "@aa-second"))
    held = book.pay(10, 0, "@zz-first", "@aa-second", pending=True).json()["id"]
    commit = _locking_statements(
        book, lambda: book.api.post(f"{book.url}/transactions/{held}/commit")
    )
    assert len(posting) == 1 and len(commit) == 1
    for sql in posting + commit:
        plan = _plan_of(sql)
        assert any(n["Node Type"] == "LockRows" for n in _nodes(plan)), sql
        assert _unordered_locks(plan) == 0, sql


def test_a_watched_posting_reads_only_its_own_monitors_without_statistics(book):
    # The statement that finds and locks the monitors of a posting's accounts
    # (``monitors.LOCK_WATCHERS``) once joined the walk up the tree to the organization's
    # monitors: on tables never analyzed PostgreSQL read every account of the organization at
    # each step of the walk and hashed every monitor, on each posting.
    ledger = Ledger.objects.get(pk=book.url.rsplit("/", 1)[1])
    threshold = {"amount": 0, "scale": 2}
    for n in range(ACCOUNTS // 2):
        account = account_create(ledger=ledger, asset_code="BRL", alias=f"@a{n}")
        monitor_create(ledger=ledger, account_id=account.pk, measure="available",
                       condition="below", threshold=threshold)  # fmt: skip
    for alias in ("@alice", "@bob", "@fees/platform"):
        account = Account.objects.get(ledger=ledger, alias=alias)
        monitor_create(ledger=ledger, account_id=account.pk, measure="available",
                       condition="below", threshold=threshold)  # fmt: skip
    book.fund("@alice", 1_000_000)
    for _ in range(12):  # prepared, then planned for its values five times
        assert book.pay(10, 0).status_code == 201
    before = _rows_read(("organizations_account", "organizations_balancemonitor"))
    for _ in range(10):
        assert book.pay(10, 0).status_code == 201
    after = _rows_read(("organizations_account", "organizations_balancemonitor"))
    per_posting = {table: (after[table] - before[table]) / 10 for table in after}
    assert all(rows <= 12 for rows in per_posting.values()), per_posting


def test_tree_monitors_are_locked_in_monitor_id_order(book):
    """Two watched trees whose monitors' ids are in the reverse order of the accounts':
    locked in the accounts' order, two postings between them could deadlock."""
    ledger = Ledger.objects.get(pk=book.url.rsplit("/", 1)[1])
    threshold = {"amount": 0, "scale": 2}
    for alias in ("@bob", "@alice"):
        account = Account.objects.get(ledger=ledger, alias=alias)
        monitor_create(ledger=ledger, account_id=account.pk, measure="available",
                       condition="below", threshold=threshold, tree=True,
                       asset_code="BRL")  # fmt: skip
    book.fund("@alice", 1_000)
    with CaptureQueriesContext(connection) as queries:
        assert book.pay(10, 0).status_code == 201
    (sql,) = [q["sql"] for q in queries.captured_queries if "AS watched_account" in q["sql"]]
    plan = _plan_of(sql)
    assert sum(n["Node Type"] == "LockRows" for n in _nodes(plan)) == 1, sql
    assert _unordered_locks(plan) == 0, sql
