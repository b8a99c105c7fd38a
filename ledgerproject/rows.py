"""Model instances from a literal SQL statement, at a fraction of ``Manager.raw``'s cost.

The posting path reads its rows (token, ledger, templates, accounts, balances) with literal
statements on PostgreSQL: compiling the ORM's query cost more than running it. ``raw()`` still
pays on every query for what never changes: it reads the cursor's description, maps the
columns to fields and asks every field for its converters. A ``Select`` does that once: it
names the model's columns in field order (then any extra values), and ``fetch`` builds the
instances through ``Model.from_db`` with the converters the ORM would apply (an amount is an
``int``, a JSON column a ``dict``, as from any queryset)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property
from typing import Any, Generic, TypeVar

from django.db import connection, models

M = TypeVar("M", bound=models.Model)
Converter = Callable[[Any, Any, Any], Any]


class Select(Generic[M]):
    """``SELECT <the model's columns as alias.col>[, extra] <rest>``. The extra values of a row
    are kept on its instance as ``_extra`` (a tuple)."""

    def __init__(self, model: type[M], alias: str, rest: str, extra: Sequence[str] = ()) -> None:
        self.model, self.alias, self.rest, self.extra = model, alias, rest, tuple(extra)

    @cached_property
    def sql(self) -> str:
        names = [f'{self.alias}."{f.column}"' for f in self.model._meta.concrete_fields]
        return f"SELECT {', '.join([*names, *self.extra])} {self.rest}"

    @cached_property
    def converters(self) -> list[tuple[int, Any, list[Converter]]]:
        """``(index, column, converters)`` of the fields whose values the ORM converts, for
        the database this process uses."""
        plan = []
        for index, field in enumerate(self.model._meta.concrete_fields):
            col = field.get_col(self.model._meta.db_table)
            found = connection.ops.get_db_converters(col) + col.get_db_converters(connection)
            if found:
                plan.append((index, col, found))
        return plan

    def fetch(self, params: Sequence[Any]) -> list[M]:
        width = len(self.model._meta.concrete_fields)
        plan, alias, from_db = self.converters, connection.alias, self.model.from_db
        with connection.cursor() as cursor:
            cursor.execute(self.sql, params)
            rows = cursor.fetchall()
        out = []
        for row in rows:
            values = list(row[:width])
            for index, col, found in plan:
                value = values[index]
                for convert in found:
                    value = convert(value, col, connection)
                values[index] = value
            obj = from_db(alias, None, values)  # type: ignore[arg-type]
            if self.extra:
                obj._extra = row[width:]  # type: ignore[attr-defined]
            out.append(obj)
        return out
