"""What the database is asked the same way from everywhere: the one choice between PostgreSQL
and SQLite (``by_database``), exact sums, list parameters, the shared cursor, and the abstract
model bases of every tenant resource. The migrations' own operations are ``migration_ops``'s."""

from __future__ import annotations

import contextlib
import functools
import re
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextvars import ContextVar
from typing import Any, ParamSpec, TypeVar

from django.db import DEFAULT_DB_ALIAS, IntegrityError, connection, connections, models, transaction
from django.db.models import F, QuerySet, Sum
from django.utils import timezone
from uuid_utils.compat import uuid7

from ledgerproject.amounts import MAX_DIGITS
from ledgerproject.errors import LedgerError
from ledgerproject.formats import str_of
from ledgerproject.metadata import validate_metadata

P = ParamSpec("P")
R = TypeVar("R")


def by_database(*, postgresql: Callable[P, R], sqlite: Callable[P, R]) -> Callable[P, R]:
    """One function with a form for each database, written side by side where the rule lives:
    the application calls it and never asks which database it runs on (no module but this one
    reads ``connection.vendor``; ``tests/test_layers.py`` holds that). The form is chosen once,
    on the first call, for the process's database (Citus is PostgreSQL), and kept."""
    chosen: list[Callable[P, R]] = []

    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        if not chosen:
            postgres = connections[DEFAULT_DB_ALIAS].vendor == "postgresql"
            chosen.append(postgresql if postgres else sqlite)
        return chosen[0](*args, **kwargs)

    return functools.wraps(postgresql)(call)


class AmountField(models.Field):
    """An integer of up to ``amounts.MAX_DIGITS`` digits, read and written as a Python ``int``.

    PostgreSQL stores ``numeric(38, 0)``; SQLite, whose integers stop at 64 bits, stores the
    canonical decimal text (no leading zeros, ``-`` for negatives), under which the sign checks
    of the CHECK constraints (``>= 0``, ``> 0``) still compare correctly. Sums of these columns
    go through ``exact_sum``, never SQLite's arithmetic."""

    description = "An integer of up to 38 digits"

    def db_type(self, connection: Any) -> str:
        return f"numeric({MAX_DIGITS}, 0)" if connection.vendor == "postgresql" else "text"

    def get_prep_value(self, value: Any) -> Any:
        value = super().get_prep_value(value)
        return None if value is None else int(value)

    def get_db_prep_value(self, value: Any, connection: Any, prepared: bool = False) -> Any:
        if not prepared:
            value = self.get_prep_value(value)
        if value is None or connection.vendor == "postgresql":
            return value
        return str(value)

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> int | None:
        return None if value is None else int(value)

    def to_python(self, value: Any) -> int | None:
        return None if value is None else int(value)

    def formfield(self, **kwargs: Any) -> Any:
        from django import forms

        return super().formfield(**{"form_class": forms.IntegerField, **kwargs})


def _grouped_sums_postgresql(
    queryset: QuerySet[Any], keys: tuple[str, ...], fields: tuple[str, ...]
) -> dict[tuple[Any, ...], int]:
    """``{(key values): sum of the fields over the rows of that group}``, exactly: PostgreSQL
    adds ``numeric`` values in the query."""
    total = Sum(sum((F(f) for f in fields[1:]), F(fields[0])), output_field=AmountField())
    rows = queryset.values_list(*keys).annotate(total=total).order_by()
    return {tuple(row[:-1]): int(row[-1] or 0) for row in rows}


def _grouped_sums_sqlite(
    queryset: QuerySet[Any], keys: tuple[str, ...], fields: tuple[str, ...]
) -> dict[tuple[Any, ...], int]:
    """SQLite's arithmetic overflows past 64 bits (or turns to floating point): the rows are
    streamed and Python adds them. Linear."""
    totals: dict[tuple[Any, ...], int] = {}
    width = len(keys)
    for row in queryset.values_list(*keys, *fields).order_by().iterator(chunk_size=5000):
        key = tuple(row[:width])
        totals[key] = totals.get(key, 0) + sum(int(v or 0) for v in row[width:])
    return totals


grouped_sums = by_database(postgresql=_grouped_sums_postgresql, sqlite=_grouped_sums_sqlite)


def database_name() -> str:
    """``postgresql`` or ``sqlite``, for what reports it (the health endpoint); code that needs
    a form per database uses ``by_database``."""
    return str(connection.vendor)


def _snapshot_postgresql() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")


def _snapshot_sqlite() -> None:
    """SQLite's transaction reads one state of the database as it is."""


_read_one_snapshot = by_database(postgresql=_snapshot_postgresql, sqlite=_snapshot_sqlite)


@contextlib.contextmanager
def one_snapshot() -> Iterator[None]:
    """A transaction whose reads all see one state of the database, whatever commits meanwhile
    (on PostgreSQL REPEATABLE READ, read only). Inside a caller's transaction, the reads share
    that transaction's view instead."""
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if outermost:
            _read_one_snapshot()
        yield


def field_of(model: type[models.Model], name: str) -> models.Field[Any, Any]:
    """A model's own (concrete) field by name."""
    field = model._meta.get_field(name)
    assert isinstance(field, models.Field), name
    return field


def apply_changes(obj: Any, data: dict[str, Any]) -> Any:
    """Set the fields a write changes, after the rules every resource shares (metadata)."""
    if "metadata" in data:
        data = {**data, "metadata": validate_metadata(data["metadata"] or {})}
    for field, value in data.items():
        setattr(obj, field, value)
    return obj


_shared_cursor: ContextVar[Any] = ContextVar("shared_cursor", default=None)


@contextlib.contextmanager
def one_cursor() -> Iterator[Any]:
    """The statements run inside through ``cursor()`` share one cursor. Making a cursor costs
    Django and psycopg more Python than running a short statement does (each wraps, checks
    and copies its adapters), so the engine opens one for all the statements of a posting's
    database transaction. The ORM's queries still make their own."""
    with connection.cursor() as shared:
        token = _shared_cursor.set(shared)
        try:
            yield shared
        finally:
            _shared_cursor.reset(token)


def cursor() -> contextlib.AbstractContextManager[Any]:
    """``connection.cursor()``, or, inside ``one_cursor``, the cursor it shares (left open
    on leaving: its owner closes it)."""
    shared = _shared_cursor.get()
    return connection.cursor() if shared is None else contextlib.nullcontext(shared)


def new_id() -> uuid.UUID:
    """Time-ordered UUIDv7 ids keep primary-key indexes append-mostly. ``uuid_utils.compat``
    makes them in Rust (increasing within a millisecond too) and answers the standard
    library's ``uuid.UUID`` itself, a fifth of the work of building one in Python."""
    return uuid7()


class UpdatedAtField(models.DateTimeField):
    """``auto_now``, but a row inserted with its time already set keeps it: the posting engine
    stamps a transaction and its operations once, renders its answer and event from that
    stamp, and writes them (on SQLite through ``bulk_create``, which would stamp them again a
    moment later, so that the stored row and the journal's entry would disagree). Declared to
    migrations as the plain field: the database sees no difference."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("auto_now", True)
        super().__init__(*args, **kwargs)

    def pre_save(self, model_instance: models.Model, add: bool) -> Any:
        value = getattr(model_instance, self.attname)
        if add and value is not None:
            return value
        return super().pre_save(model_instance, add)

    def deconstruct(self) -> Any:
        name, _, args, kwargs = super().deconstruct()
        return name, "django.db.models.DateTimeField", args, kwargs


class TimestampedModel(models.Model):
    id = models.UUIDField(primary_key=True, default=new_id, editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = UpdatedAtField()

    class Meta:
        abstract = True
        ordering = ["created_at", "id"]


class ResourceModel(TimestampedModel):
    """A soft-deletable resource with the specification's status object and metadata."""

    status_code = models.CharField(max_length=100, default="ACTIVE")
    status_description = models.CharField(max_length=256, null=True, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    deleted_at = models.DateTimeField(null=True, blank=True)

    class Meta(TimestampedModel.Meta):
        abstract = True

    @property
    def is_deleted(self) -> bool:
        return self.deleted_at is not None


def active_duplicate_exists(duplicates: QuerySet[Any]) -> bool:
    """The pre-check of ``unique_among_active`` (tests replace it to reach the race path)."""
    return duplicates.filter(deleted_at__isnull=True).exists()


@contextlib.contextmanager
def unique_among_active(
    duplicates: QuerySet[Any], conflict: LedgerError, *, exclude: Any = None
) -> Iterator[None]:
    """Write, inside this block, a row that must be unique among the active rows ``duplicates``
    selects: an active duplicate answers ``conflict`` before the write, and the partial unique
    constraint's IntegrityError (a duplicate committed meanwhile) answers it after."""
    if exclude is not None:
        duplicates = duplicates.exclude(pk=exclude)
    if active_duplicate_exists(duplicates):
        raise conflict
    try:
        with transaction.atomic():
            yield
    except IntegrityError:
        raise conflict from None


def pg_array(values: Iterable[Any]) -> str:
    """A PostgreSQL array literal of ``values`` (ids, codes, aliases, timestamps: their text),
    sent as one text parameter and cast in the statement (``= ANY(%s::uuid[])``). psycopg's
    own list adaptation looks up a dumper for every element of every list on every execute;
    this is one string. Each element is quoted, and a backslash or a double quote in it is
    escaped, so no element can end the literal or the array; ``None`` is refused (no statement
    passes one)."""
    quoted = []
    for value in values:
        if value is None:
            raise ValueError("pg_array: None in an array parameter")
        text = str_of(value)
        if "\\" in text or '"' in text:
            text = text.replace("\\", "\\\\").replace('"', '\\"')
        quoted.append(f'"{text}"')
    return "{" + ",".join(quoted) + "}"


# An array parameter of this many elements or fewer is sent one element per parameter.
FEW = 4
_bound: dict[tuple[str, tuple[tuple[int, str] | None, ...], bool], str] = {}


class ArrayParam:
    """A list parameter of a planned statement, written ``= ANY(%s)`` in its text (no cast:
    ``cast`` is the element type); a statement that runs only on PostgreSQL may also read it
    elsewhere (``unnest(%s)``). ``bind_arrays`` writes it out by its length.

    PostgreSQL estimates an array parameter of unknown length at ten elements, so the generic
    plan of a statement holding one looks dearer than a custom plan for the real two, and it
    plans the statement again on every run. ``ARRAY[$3, $4]`` has a length the planner sees:
    after five runs the generic plan wins and is kept for the connection's life (one text, and
    one prepared statement, per length). More than ``FEW`` elements (a batch) go as one array
    literal (``pg_array``), planned each time, which a batch pays once for all its items."""

    __slots__ = ("cast", "values")
    # The element types a statement may name: the cast is written into the statement's text.
    CASTS = frozenset({"uuid", "varchar", "text"})

    def __init__(self, values: Iterable[Any], cast: str) -> None:
        if cast not in self.CASTS:
            raise ValueError(f"ArrayParam: no cast {cast!r}")
        self.values, self.cast = list(values), cast


def bind_arrays(sql: str, params: Sequence[Any]) -> tuple[str, Sequence[Any]]:
    """``sql`` and ``params`` with each ``ArrayParam`` written out: ``ARRAY[%s, ...]::cast[]``
    with its elements as parameters (``FEW`` or fewer, at least one), else ``%s::cast[]`` with
    one array literal. Every placeholder is ``%s`` (none is ``%(name)s``, no ``%%``). The
    statement's text for each shape is made once (a statement has at most ``FEW + 1`` shapes
    per array parameter, however long its lists). SQLite has no arrays: there ``x = ANY(%s)``
    is written ``x IN (%s, ...)``, a parameter per element (a text per length, a batch's at
    most), so that one statement serves both databases."""
    sqlite = connection.vendor == "sqlite"
    shape = tuple(
        (_slots(p, sqlite), p.cast) if isinstance(p, ArrayParam) else None for p in params
    )
    if not any(shape):
        return sql, params
    text = _bound.get((sql, shape, sqlite))
    if text is None:
        parts = sql.split("%s")
        if len(parts) != len(params) + 1 or "%%" in sql or "%(" in sql:
            raise ValueError("bind_arrays: one plain %s placeholder per parameter")
        out = [parts[0]]
        for kind, part in zip(shape, parts[1:], strict=True):
            if kind is None:
                out.append("%s")
            elif sqlite:  # no arrays: ``x = ANY(%s)`` is written ``x IN (%s, ...)``
                equals_any = _EQUALS_ANY.search(out[-1])
                if equals_any is None:
                    raise ValueError("bind_arrays: on SQLite a list is only read by = ANY(%s)")
                out[-1] = out[-1][: equals_any.start()] + " IN ("
                out.append(", ".join(["%s"] * kind[0]))
            else:
                slots, cast = kind
                out.append(
                    f"ARRAY[{', '.join(['%s'] * slots)}]::{cast}[]" if slots else f"%s::{cast}[]"
                )
            out.append(part)
        text = _bound.setdefault((sql, shape, sqlite), "".join(out))
    values: list[Any] = []
    for param, kind in zip(params, shape, strict=True):
        if kind is None:
            values.append(param)
        elif sqlite and param.cast == "uuid":  # a uuid given as text is sent as one
            values.extend(
                v if isinstance(v, uuid.UUID) else uuid.UUID(str(v)) for v in param.values
            )
        elif kind[0] or sqlite:
            values.extend(param.values)
        else:
            values.append(pg_array(param.values))
    return text, values


# ``= ANY(`` at the end of the text before a list's placeholder (not ``>= ANY(``, ``<= ANY(``).
_EQUALS_ANY = re.compile(r"(?<![<>!])\s*=\s*ANY\($")


def _slots(param: ArrayParam, sqlite: bool) -> int:
    """How many parameters the list takes: one per element, or 0 for one array literal
    (PostgreSQL, more than ``FEW``)."""
    count = len(param.values)
    return count if count <= FEW or sqlite else 0
