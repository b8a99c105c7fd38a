"""``db.pg_array``: the posting's list parameters as one PostgreSQL array literal. Whatever the
elements hold, PostgreSQL reads back exactly the elements sent, one per element.

``db.bind_arrays``: an ``ArrayParam`` of a few elements goes one parameter per element
(``ARRAY[%s, %s]``), more as one literal; either way PostgreSQL reads the same array."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection

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
    from ledgerproject import db

    bind_arrays("z = ANY(%s)", [ArrayParam(["a"] * (FEW + 1), "text")])
    before = len(db._bound)
    for length in range(FEW + 1, 200):
        sql, _ = bind_arrays("z = ANY(%s)", [ArrayParam(["a"] * length, "text")])
        assert sql == "z = ANY(%s::text[])"
    assert len(db._bound) == before


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
