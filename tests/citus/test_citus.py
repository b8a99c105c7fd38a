"""On a Citus cluster (LEDGER_CITUS=1, the coordinator as DATABASE_URL; .ci/run starts one with
scripts/citus-cluster): the layout ``manage.py distribute`` makes, a posting that Citus runs as
single-shard statements on one worker, organizations spread over the workers, and a worker
that stops without costing the other worker's organizations anything acknowledged.

Collected only in that mode (tests/conftest.py)."""

from __future__ import annotations

import io
import os
import subprocess
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection

from ledgerproject.tenancy import (
    COORDINATOR_TABLES,
    REFERENCE_TABLES,
    TENANT_TABLES,
    DistributedWithTheOthers,
)
from tests.concurrency.conftest import run_threads
from tests.conftest import Api, make_token
from tests.transactions.conftest import Book, make_book

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

CLUSTER = Path(__file__).resolve().parents[2] / "scripts" / "citus-cluster"


def _rows(sql: str, params: Any = ()) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _book(api: Api, name: str) -> Book:
    """A new organization with one ledger, set up as ``make_book`` does."""
    org = api.post("/v1/organizations", {"legalName": name, "legalDocument": "1"}).json()
    ledger = api.post(f"/v1/organizations/{org['id']}/ledgers", {"name": "Main"}).json()
    return make_book(api, f"/v1/organizations/{org['id']}/ledgers/{ledger['id']}")


def _books_on_two_workers(api: Api, name: str) -> dict[int, Book]:
    """Two new organizations held by different workers, by the worker's port (hash placement:
    a few tries find them)."""
    books: dict[int, Book] = {}
    for index in range(24):
        book = _book(api, f"{name} {index}")
        books.setdefault(_worker_of(_organization_id(book)), book)
        if len(books) == 2:
            return books
    raise AssertionError("every organization landed on one worker")


def _organization_id(book: Book) -> str:
    return book.url.split("/")[3]


def _worker_of(organization_id: str, table: str = TENANT_TABLES[0]) -> int:
    """The port of the worker holding this organization's rows of ``table``."""
    [(port,)] = _rows(
        "SELECT p.nodeport FROM pg_dist_placement pl JOIN pg_dist_node p USING (groupid) "
        "WHERE pl.shardid = get_shard_id_for_distribution_column(%s, %s::uuid)",
        [table, organization_id],
    )
    return port


def _counters() -> tuple[int, int]:
    [(single, multi)] = _rows(
        "SELECT query_execution_single_shard, query_execution_multi_shard "
        "FROM citus_stat_counters WHERE name = current_database()"
    )
    return single, multi


@pytest.fixture
def api() -> Api:
    return Api(make_token(f"citus-{uuid.uuid4().hex[:8]}"))


def test_distribute_made_the_layout_and_changes_nothing_the_second_time():
    kinds = dict(_rows("SELECT table_name::text, citus_table_type FROM citus_tables"))
    assert {t: kinds.get(t) for t in TENANT_TABLES} == {t: "distributed" for t in TENANT_TABLES}
    assert {t: kinds.get(t) for t in REFERENCE_TABLES} == {t: "reference" for t in REFERENCE_TABLES}
    assert {t: kinds.get(t) for t in COORDINATOR_TABLES} == {t: "local" for t in COORDINATOR_TABLES}
    assert "auth_user" not in kinds  # Django's own tables stay plain coordinator tables
    colocation = _rows(
        "SELECT DISTINCT colocationid FROM pg_dist_partition WHERE logicalrelid::regclass::text "
        "= ANY(%s)",
        [list(TENANT_TABLES)],
    )
    assert len(colocation) == 1  # every tenant table co-located with the others
    out = io.StringIO()
    call_command("distribute", stdout=out)
    assert "all already were" in out.getvalue()


def test_a_posting_and_its_event_commit_together_with_two_phase_commit(api):
    """The event row is on the coordinator, the posting's rows on a worker: Citus prepares the
    worker's part before the coordinator commits, so neither commits without the other. Read
    from the commands Citus sends (``citus.log_remote_commands``)."""
    book = _book(api, "Atomic")
    book.fund("@alice", 1_000)
    book.pay(1, 1)  # the connection is open now
    sent: list[str] = []
    raw = connection.connection

    def handler(diag: Any) -> None:
        sent.append(diag.message_primary or "")

    raw.add_notice_handler(handler)
    with connection.cursor() as cursor:
        cursor.execute("SET citus.log_remote_commands TO on")
        cursor.execute("SET client_min_messages TO log")
    try:
        response = book.pay(100, 1)
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET citus.log_remote_commands")
            cursor.execute("RESET client_min_messages")
        raw.remove_notice_handler(handler)
    assert response.status_code == 201
    commands = " | ".join(sent)
    assert "PREPARE TRANSACTION" in commands, commands
    assert "COMMIT PREPARED" in commands, commands
    assert _rows(
        "SELECT count(*) FROM outbox_event WHERE organization_id = %s AND resource_id = %s",
        [_organization_id(book), response.json()["id"]],
    ) == [(1,)]


def test_a_posting_is_single_shard_statements_on_the_organizations_worker(api):
    book = _book(api, "Routed")
    book.fund("@alice", 10_000)
    book.pay(100, 1)  # the connection, the template and the accounts are warm now
    before = _counters()
    with connection.cursor() as cursor:  # a statement Citus splits over shards now fails
        cursor.execute("SET citus.multi_task_query_log_level TO 'error'")
    response = book.pay(2_500, 100)
    with connection.cursor() as cursor:
        cursor.execute("RESET citus.multi_task_query_log_level")
    after = _counters()
    assert response.status_code == 201, response.content
    single, multi = after[0] - before[0], after[1] - before[1]
    assert multi == 0, f"{multi} multi-shard statements in one posting"
    assert single > 0
    # The rows it wrote are on the worker that holds the organization, and only there.
    tx_id = response.json()["id"]
    organization_id = _organization_id(book)
    assert _worker_of(organization_id, "transactions_operation") == _worker_of(organization_id)
    assert _rows(
        "SELECT count(*) FROM transactions_operation WHERE organization_id = %s AND "
        "transaction_id = %s",
        [_organization_id(book), tx_id],
    ) == [(3,)]


def test_explain_shows_the_balance_lock_routed_to_one_task(api):
    book = _book(api, "Explained")
    organization_id = _organization_id(book)
    plan = "\n".join(
        row[0]
        for row in _rows(
            "EXPLAIN SELECT * FROM organizations_balance WHERE organization_id = %s "
            "AND account_id = ANY(%s) ORDER BY id FOR UPDATE",
            [organization_id, [uuid.uuid4()]],
        )
    )
    assert "Task Count: 1" in plan, plan
    assert f"port={_worker_of(organization_id)}" in plan, plan


def test_two_organizations_post_on_different_workers(api):
    books = _books_on_two_workers(api, "Spread")
    for book in books.values():
        book.fund("@alice", 1_000)
        assert book.pay(100, 1).status_code == 201
        assert book.balance("@bob")["available"] == 100
    for port, book in books.items():
        organization_id = _organization_id(book)
        [(shard,)] = _rows(
            "SELECT get_shard_id_for_distribution_column('transactions_transaction', %s::uuid)",
            [organization_id],
        )
        other = next(p for p in books if p != port)
        assert _shard_count(port, shard, organization_id) == 2  # the fund and the payment
        assert _shard_count(other, shard, organization_id) is None  # no such shard there


def _shard_count(port: int, shard: int, organization_id: str) -> int | None:
    """The organization's transactions in the worker's own shard table, read straight from the
    worker; None when the worker does not hold that shard."""
    import psycopg

    settings = connection.settings_dict
    table = f"transactions_transaction_{shard}"
    with psycopg.connect(
        host="127.0.0.1", port=port, user=settings["USER"], dbname=settings["NAME"]
    ) as conn:
        if conn.execute("SELECT to_regclass(%s)", [table]).fetchone()[0] is None:
            return None
        return conn.execute(
            f"SELECT count(*) FROM {table} WHERE organization_id = %s", [organization_id]
        ).fetchone()[0]


def test_a_stopped_worker_costs_the_other_workers_organizations_nothing_acknowledged(api):
    books = _books_on_two_workers(api, "Outage")
    ports = sorted(books)
    survivor, victim = books[ports[0]], books[ports[1]]
    victim_number = ports[1] - int(os.environ.get("CITUS_PORT", "9700"))  # worker n: port + n
    for book in books.values():
        book.fund("@alice", 1_000_000)
    stop = threading.Event()
    acknowledged: dict[str, list[str]] = {"survivor": [], "victim": []}

    def work(index: int, barrier: threading.Barrier) -> int:
        name, book = ("survivor", survivor) if index % 2 == 0 else ("victim", victim)
        barrier.wait()
        errors = 0
        while not stop.is_set():
            response = book.pay(100, 1)
            if response.status_code == 201:
                acknowledged[name].append(response.json()["id"])
            else:
                errors += 1
                time.sleep(0.05)
        return errors

    def outage(index: int, barrier: threading.Barrier) -> int:
        barrier.wait()
        time.sleep(1.0)
        subprocess.run([str(CLUSTER), "stop-worker", str(victim_number)], check=True)
        time.sleep(2.0)
        during = len(acknowledged["survivor"])
        time.sleep(2.0)
        stop.set()
        return len(acknowledged["survivor"]) - during

    try:
        results = run_threads(5, lambda i, b: outage(i, b) if i == 4 else work(i, b))
    finally:
        subprocess.run([str(CLUSTER), "start-worker", str(victim_number)], check=True)
    posted_while_down = results[4]
    assert posted_while_down > 0, "the survivor's organization stopped posting too"
    assert results[1] + results[3] > 0, "the stopped worker's organization never failed"
    time.sleep(1)
    connection.close()
    # A posting whose worker stopped between its PREPARE and its COMMIT PREPARED was committed
    # on the coordinator (and acknowledged); the worker holds it prepared until the
    # coordinator's recovery of two-phase commits finishes it, which Citus runs every
    # citus.recover_2pc_interval (a minute by default). Run it now, as an operator would.
    _rows("SELECT recover_prepared_transactions()")
    for name, book in (("survivor", survivor), ("victim", victim)):
        organization_id = _organization_id(book)
        ids = acknowledged[name]
        found = _rows(
            "SELECT count(*) FROM transactions_transaction WHERE organization_id = %s "
            "AND id = ANY(%s::uuid[])",
            [organization_id, ids],
        )
        assert found == [(len(ids),)], f"{name}: acknowledged postings missing"
        paid = 100 * len(ids)
        assert book.balance("@bob")["available"] == paid
    out = io.StringIO()
    call_command("check_ledger", stdout=out, stderr=io.StringIO())
    assert "OK" in out.getvalue(), out.getvalue()


def test_without_the_epoch_every_request_reads_its_token_and_a_revocation_is_immediate(api):
    """On Citus the epoch's triggers are gone (``distribute``): no process keeps a token, so a
    token revoked in plain SQL fails on the very next request under a ledger."""
    from organizations.models import ApiToken
    from organizations.tokens import split_prefix

    assert _rows("SELECT count(*) FROM organizations_authepoch") == [(0,)]
    book = _book(api, "Revoked")
    assert api.get(book.url).status_code == 200
    token = ApiToken.objects.get(prefix=split_prefix(api.token))
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE organizations_apitoken SET revoked_at = now() WHERE id = %s", [token.pk]
        )
    assert api.get(book.url).status_code == 401


def test_operations_stay_append_only_on_the_workers(api):
    """The trigger is on every shard of the operations table: an UPDATE or DELETE is refused."""
    from django.db import DatabaseError, transaction

    book = _book(api, "Append only")
    book.fund("@alice", 1_000)
    organization_id = _organization_id(book)
    for statement in (
        "UPDATE transactions_operation SET description = 'x' WHERE organization_id = %s",
        "DELETE FROM transactions_operation WHERE organization_id = %s",
    ):
        with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
            _rows(statement, [organization_id])
    assert _rows(
        "SELECT count(*) FROM transactions_operation WHERE organization_id = %s",
        [organization_id],
    ) == [(2,)]


def test_a_tenant_table_a_migration_makes_after_distribute_is_distributed_with_the_others():
    """A cluster distributed before a migration that adds a tenant table (as 0022 adds the
    scheduled postings): the table is distributed, co-located, before its foreign keys are
    made, which Citus would refuse from a plain table to a distributed one."""
    try:
        with connection.schema_editor() as editor:
            editor.execute(
                "CREATE TABLE probe_tenant (organization_id uuid NOT NULL, id uuid NOT NULL, "
                "ledger_id uuid NOT NULL, PRIMARY KEY (organization_id, id))"
            )
            DistributedWithTheOthers("probe_tenant").database_forwards(
                "transactions", editor, None, None
            )
            editor.execute(
                "ALTER TABLE probe_tenant ADD FOREIGN KEY (organization_id, ledger_id) "
                "REFERENCES organizations_ledger (organization_id, id)"
            )
        colocated = _rows(
            "SELECT DISTINCT colocationid FROM pg_dist_partition "
            "WHERE logicalrelid::regclass::text = ANY(%s)",
            [["probe_tenant", TENANT_TABLES[0]]],
        )
        assert len(colocated) == 1
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DROP TABLE IF EXISTS probe_tenant")
