"""Model instances from a literal SQL statement, at a fraction of ``Manager.raw``'s cost.

The posting path reads its rows (token, ledger, templates, accounts, balances) with literal
statements: compiling the ORM's query cost more than running it. The same statements run on
SQLite (a list parameter is written out for it by ``db.bind_arrays``), so there is no second,
ORM form of them. ``raw()`` still
pays on every query for what never changes: it reads the cursor's description, maps the
columns to fields and asks every field for its converters. A ``Select`` does that once: it
names the model's columns in field order (then any extra values), and ``fetch`` builds the
instances with ``Model.from_db``, after the converters the ORM would apply (an amount is an
``int``, a JSON column a ``dict``, as from any queryset). A list parameter is a
``db.ArrayParam`` (``= ANY(%s)`` in the text), written out by its length."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property
from typing import Any, Generic, TypeVar

from django.db import DEFAULT_DB_ALIAS, connection, models

from ledgerproject.db import bind_arrays, cursor, field_of

M = TypeVar("M", bound=models.Model)
Converter = Callable[[Any, Any, Any], Any]


class Select(Generic[M]):
    """``SELECT <the model's columns as alias.col>[, extra] <rest>``. The extra values of a row
    are kept on its instance as ``selected_extra`` (a tuple). ``only`` names the fields to read (as
    ``QuerySet.only``): the others are deferred, and reading one on an instance is a query of
    its own, which the query-count tests of the path that uses it would see."""

    def __init__(
        self,
        model: type[M],
        alias: str,
        rest: str,
        extra: Sequence[str] = (),
        only: Sequence[str] = (),
    ) -> None:
        self.model, self.alias, self.rest, self.extra = model, alias, rest, tuple(extra)
        self.only = tuple(only)

    @cached_property
    def fields(self) -> list[Any]:
        """The fields read, in the model's order (the primary key always among them)."""
        wanted = {field_of(self.model, name).attname for name in self.only}
        concrete = self.model._meta.concrete_fields
        pk = self.model._meta.pk
        return [f for f in concrete if not wanted or f.attname in wanted or f is pk]

    @cached_property
    def columns(self) -> list[str]:
        """The fields' columns as ``alias."column"``, in the order ``build`` reads them."""
        return [f'{self.alias}."{f.column}"' for f in self.fields]

    @cached_property
    def sql(self) -> str:
        return f"SELECT {', '.join([*self.columns, *self.extra])} {self.rest}"

    @cached_property
    def converters(self) -> list[tuple[int, Any, list[Converter]]]:
        """``(index, column, converters)`` of the fields whose values the ORM converts, for
        the database this process uses."""
        plan = []
        for index, field in enumerate(self.fields):
            col = field.get_col(self.model._meta.db_table)
            found = connection.ops.get_db_converters(col) + col.get_db_converters(connection)
            if found:
                plan.append((index, col, found))
        return plan

    def fetch(self, params: Sequence[Any]) -> list[M]:
        width = len(self.fields)
        with cursor() as shared:
            shared.execute(*bind_arrays(self.sql, params))
            rows = shared.fetchall()
        out = []
        for row in rows:
            obj = self.build(row, 0)
            if self.extra:
                obj.selected_extra = row[width:]  # type: ignore[attr-defined]
            out.append(obj)
        return out

    def build(self, row: Sequence[Any], start: int) -> M:
        """The instance whose values are ``row[start:]``, in ``columns``' order."""
        values = list(row[start : start + len(self.fields)])
        for index, col, found in self.converters:
            value = values[index]
            for convert in found:
                value = convert(value, col, connection)
            values[index] = value
        return self.model.from_db(DEFAULT_DB_ALIAS, self.attnames, values)

    @cached_property
    def attnames(self) -> tuple[str, ...]:
        return tuple(f.attname for f in self.fields)


class Join:
    """Instances of several models from each row of one statement: ``SELECT <the columns of
    each part>[, extra] <rest>`` (the parts' own ``rest`` is not used). ``fetch`` answers a
    tuple per row: an instance per part, then the extra values as one tuple."""

    def __init__(self, parts: Sequence[Select[Any]], rest: str, extra: Sequence[str] = ()) -> None:
        self.parts, self.rest, self.extra = tuple(parts), rest, tuple(extra)

    @cached_property
    def sql(self) -> str:
        names = [name for part in self.parts for name in part.columns]
        return f"SELECT {', '.join([*names, *self.extra])} {self.rest}"

    def fetch(self, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        with cursor() as shared:
            shared.execute(*bind_arrays(self.sql, params))
            rows = shared.fetchall()
        out = []
        for row in rows:
            built, start = [], 0
            for part in self.parts:
                built.append(part.build(row, start))
                start += len(part.fields)
            out.append((*built, tuple(row[start:])))
        return out
