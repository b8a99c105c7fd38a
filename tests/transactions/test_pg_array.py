"""``db.pg_array``: the posting's list parameters as one PostgreSQL array literal. Whatever the
elements hold, PostgreSQL reads back exactly the elements sent, one per element.

``db.bind_arrays``: an ``ArrayParam`` of a few elements goes one parameter per element
(``ARRAY[%s, %s]``), more as one literal; either way PostgreSQL reads the same array. SQLite,
which has no arrays, reads ``= ANY(%s)`` as ``IN (%s, ...)``. The renderings are tested for
both databases whichever one the suite runs on (``on``)."""

from __future__ import annotations

import uuid
from types import SimpleNamespace

import pytest
from django.db import connection

from ledgerproject import db
from ledgerproject.db import FEW, ArrayParam, bind_arrays, pg_array

TRICKY = ['plain', 'a"quote', "back\\slash", "\\\"", "{braces,comma}", "", "NULL", " space ",
          "ünïcødé ✓", "semi;colon", "'single'", "@b1"]  # fmt: skip


def test_refuses_none() -> None:
    with pytest.raises(ValueError):
        pg_array(["a", None])


def test_the_literal_quotes_every_element() -> None:
    assert pg_array([]) == "{}"
    assert pg_array(['a"b', "c\\d"]) == '{"a\\"b","c\\\\d"}'


@pytest.mark.django_db
@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's array literal")
def test_postgresql_reads_back_exactly_what_was_sent() -> None:
    ids = [uuid.uuid4(), uuid.uuid4()]
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s::text[], %s::uuid[]", [pg_array(TRICKY), pg_array(ids)])
        texts, uuids = cursor.fetchone()
    assert texts == TRICKY
    assert uuids == ids


@pytest.fixture
def on(monkeypatch: pytest.MonkeyPatch):
    """``on("sqlite")``: the statements are rendered for that database from now on."""
    return lambda vendor: monkeypatch.setattr(db, "connection", SimpleNamespace(vendor=vendor))


@pytest.fixture(autouse=True)
def _postgresql_unless_told(on) -> None:
    on("postgresql")


def test_a_few_elements_go_one_parameter_each() -> None:
    sql, params = bind_arrays("x = %s AND y = ANY(%s)", [1, ArrayParam(["a", "b"], "varchar")])
    assert sql == "x = %s AND y = ANY(ARRAY[%s, %s]::varchar[])"
    assert params == [1, "a", "b"]


def test_more_than_a_few_go_as_one_literal() -> None:
    many = [str(n) for n in range(FEW + 1)]
    sql, params = bind_arrays("y = ANY(%s)", [ArrayParam(many, "varchar")])
    assert sql == "y = ANY(%s::varchar[])"
    assert params == [pg_array(many)]
    empty_sql, empty = bind_arrays("y = ANY(%s)", [ArrayParam([], "uuid")])
    assert (empty_sql, empty) == ("y = ANY(%s::uuid[])", ["{}"])


def test_long_lists_share_one_text_however_long() -> None:
    bind_arrays("z = ANY(%s)", [ArrayParam(["a"] * (FEW + 1), "text")])
    before = len(db._bound)
    for length in range(FEW + 1, 200):
        sql, _ = bind_arrays("z = ANY(%s)", [ArrayParam(["a"] * length, "text")])
        assert sql == "z = ANY(%s::text[])"
    assert len(db._bound) == before


def test_on_sqlite_a_list_is_an_in_list_of_any_length(on) -> None:
    on("sqlite")
    sql, params = bind_arrays("x = %s AND y = ANY(%s)", [1, ArrayParam(["a", "b"], "varchar")])
    assert (sql, params) == ("x = %s AND y IN (%s, %s)", [1, "a", "b"])
    many = [str(n) for n in range(FEW + 1)]
    sql, params = bind_arrays("y = ANY(%s)", [ArrayParam(many, "varchar")])
    assert sql == f"y IN ({', '.join(['%s'] * (FEW + 1))})" and params == many
    assert bind_arrays("y = ANY(%s)", [ArrayParam([], "uuid")]) == ("y IN ()", [])


def test_each_database_has_its_own_text_of_one_statement(on) -> None:
    one = [ArrayParam(["a"], "varchar")]
    assert bind_arrays("w = ANY(%s)", one)[0] == "w = ANY(ARRAY[%s]::varchar[])"
    on("sqlite")
    assert bind_arrays("w = ANY(%s)", one)[0] == "w IN (%s)"


def test_on_sqlite_a_list_must_be_read_by_equality_with_any(on) -> None:
    on("sqlite")
    for sql in ("y = unnest(%s)", "y >= ANY(%s)", "y <= ANY(%s)", "y != ANY(%s)", "y <> ANY(%s)"):
        with pytest.raises(ValueError):
            bind_arrays(sql, [ArrayParam(["a"], "varchar")])


def test_on_sqlite_uuids_given_as_text_are_sent_as_uuids(on) -> None:
    on("sqlite")
    one = uuid.uuid4()
    assert bind_arrays("id = ANY(%s)", [ArrayParam([str(one)], "uuid")])[1] == [one]


@pytest.mark.django_db
def test_the_suite_s_database_finds_the_rows_of_a_list_of_any_length(monkeypatch) -> None:
    from organizations.services import organization_create

    monkeypatch.undo()  # rendered for the database the suite runs on
    made = [organization_create(legal_name=f"O{n}", legal_document=f"D{n}").pk for n in range(9)]
    count = "SELECT count(*) FROM organizations_organization WHERE id = ANY(%s)"
    for wanted in (made[:2], made, []):
        with connection.cursor() as cursor:
            cursor.execute(*bind_arrays(count, [ArrayParam(wanted, "uuid")]))
            assert cursor.fetchone()[0] == len(wanted)


def test_a_statement_without_arrays_is_left_as_it_is() -> None:
    assert bind_arrays("x = %s", [1]) == ("x = %s", [1])


def test_only_known_element_types_reach_the_statement() -> None:
    with pytest.raises(ValueError):
        ArrayParam(["a"], "text[]); DROP TABLE x; --")


def test_refuses_placeholders_it_cannot_count() -> None:
    for sql in ("x = %s", "x = %s AND y = ANY(%s) AND z LIKE '%%'", "x = %(x)s AND %s"):
        with pytest.raises(ValueError):
            bind_arrays(sql, [ArrayParam(["a"], "varchar"), 2])


@pytest.mark.django_db
@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's arrays")
@pytest.mark.parametrize("length", [1, 2, FEW, FEW + 1, len(TRICKY)])
def test_postgresql_reads_the_same_array_either_way(length: int) -> None:
    texts, ids = TRICKY[:length], [uuid.uuid4() for _ in range(length)]
    sql, params = bind_arrays(
        "SELECT %s, %s, %s", [ArrayParam(texts, "text"), 7, ArrayParam(ids, "uuid")]
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        assert cursor.fetchone() == (texts, 7, ids)
