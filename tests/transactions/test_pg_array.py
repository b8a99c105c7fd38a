"""``db.pg_array``: the posting's list parameters as one PostgreSQL array literal. Whatever the
elements hold, PostgreSQL reads back exactly the elements sent, one per element."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection

from ledgerproject.db import pg_array

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
