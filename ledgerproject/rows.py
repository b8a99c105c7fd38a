"""Model instances from a literal SQL statement, at a fraction of ``Manager.raw``'s cost.

The posting path reads its rows (token, ledger, templates, accounts, balances) with literal
statements: compiling the ORM's query cost more than running it. The same statements run on
SQLite (a list parameter is written out for it by ``db.bind_arrays``), so there is no second,
ORM form of them. ``raw()`` still
pays on every query for what never changes: it reads the cursor's description, maps the
columns to fields and asks every field for its converters. A ``Select`` does that once: it
names the model's columns in field order (then any extra values), and ``fetch`` builds the
instances ``Model.from_db`` would (``loaded``) with the converters the ORM would apply (an
amount is an ``int``, a JSON column a ``dict``, as from any queryset). A list parameter is a
``db.ArrayParam`` (``= ANY(%s)`` in the text), written out by its length."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache, cached_property
from typing import Any, Generic, NamedTuple, TypeVar

from django.db import DEFAULT_DB_ALIAS, connection, models
from django.db.models.base import ModelState
from django.db.models.fields.related import ForeignObjectRel
from django.db.models.fields.related_descriptors import ForeignKeyDeferredAttribute
from django.db.models.signals import ModelSignal, post_init, pre_init

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
        return loaded(self.model, self.attnames, values)

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


def loaded(model: type[M], attnames: Sequence[str], values: Sequence[Any]) -> M:
    """``Model.from_db`` for these fields' values (the others deferred), the same instance:
    Django's ``__init__`` sets each attribute through ``setattr``, and a foreign key's id
    through a descriptor that only matters once its object is cached, which a new instance's
    is not. An attribute with a setter of its own still goes through it, and the init signals
    are sent when something listens to them."""
    if _listened(pre_init, model):
        pre_init.send(sender=model, args=(), kwargs={})
    obj = model.__new__(model)
    state = obj._state = ModelState()
    state.adding, state.db = False, DEFAULT_DB_ALIAS  # the rows are read through ``connection``
    setters = _plan(model).setter_names
    if setters.isdisjoint(attnames):
        obj.__dict__.update(zip(attnames, values, strict=True))
    else:
        data = obj.__dict__
        for name, value in zip(attnames, values, strict=True):
            if name in setters:
                setattr(obj, name, value)
            else:
                data[name] = value
    if _listened(post_init, model):
        post_init.send(sender=model, instance=obj)
    return obj


def new(model: type[M], **values: Any) -> M:
    """``model(**values)``, the same instance, for the rows a posting creates (its transaction,
    operations and event): Django's ``Model.__init__`` looks each keyword up against every
    field, which was a tenth of a posting's Python time. Each concrete field not given takes
    its default (one that is a constant is copied from the plan, and a callable one is called
    only for a field not given), a related object given by its field's name goes through
    Django's descriptor (which sets the id and caches the object), an attribute with a setter
    of its own goes through it, and the init signals are sent when something listens to
    them. A keyword that names no field is refused, as Django refuses it; so is a relation's id
    given with its object (Django lets the id win, and drops the object)."""
    plan = _plan(model)
    obj = model.__new__(model)
    if _listened(pre_init, model):
        pre_init.send(sender=model, args=(), kwargs=values)
    obj._state = ModelState()
    related = [(name, values.pop(name)) for name in plan.related if name in values]
    taken = {plan.related[name] for name, _ in related}  # an id given with its object
    if not values.keys() <= plan.attnames or not taken.isdisjoint(values):
        unexpected = [key for key in values if key not in plan.attnames or key in taken]
        raise TypeError(
            f"{model.__name__}() got unexpected keyword arguments: {', '.join(unexpected)}"
        )
    data = obj.__dict__
    data.update(plan.constants)
    for attname, field in plan.computed:
        if attname not in values:
            data[attname] = field.get_default()
    for attname, field in plan.setters:
        setattr(obj, attname, values.pop(attname) if attname in values else field.get_default())
    data.update(values)
    for name, value in related:
        setattr(obj, name, value)
    if _listened(post_init, model):
        post_init.send(sender=model, instance=obj)
    return obj


def _listened(signal: ModelSignal, model: type[models.Model]) -> bool:
    """``signal.has_listeners(model)``, answered at once when nothing is connected to the
    signal at all (as in this service): asking costs a microsecond, ten times a posting's."""
    return bool(signal.receivers) and signal.has_listeners(model)


# The default a field takes as a constant, shared by every instance: only an immutable value.
_IMMUTABLE = (type(None), str, int, bool, float)


class _Plan(NamedTuple):
    """How ``new`` and ``loaded`` set a model's concrete fields (generated ones aside)."""

    attnames: frozenset[str]
    related: dict[str, str]  # a relation's name: its id's attribute
    constants: dict[str, Any]  # attributes whose default is a constant, and that constant
    computed: tuple[tuple[str, Any], ...]  # attributes whose default is made for each instance
    setters: tuple[tuple[str, Any], ...]  # attributes with a setter of their own, in field order
    setter_names: frozenset[str]


@cache
def _plan(model: type[models.Model]) -> _Plan:
    """The model's plan. A foreign key's id has a descriptor that only drops a cached object,
    which a new instance has none of: it is written straight into the instance, as every
    attribute without a setter of its own is."""
    attnames, related, constants, computed, setters = set(), {}, {}, [], []
    for field in model._meta.concrete_fields:
        if field.generated:
            continue
        attnames.add(field.attname)
        if isinstance(field.remote_field, ForeignObjectRel):
            related[field.name] = field.attname
        found = next(
            (k.__dict__[field.attname] for k in model.__mro__ if field.attname in k.__dict__), None
        )
        if hasattr(type(found), "__set__") and not isinstance(found, ForeignKeyDeferredAttribute):
            setters.append((field.attname, field))
        elif field.has_default() and callable(field.default):
            computed.append((field.attname, field))
        elif isinstance(default := field.get_default(), _IMMUTABLE):
            constants[field.attname] = default
        else:
            computed.append((field.attname, field))
    return _Plan(
        frozenset(attnames), related, constants, tuple(computed), tuple(setters),
        frozenset(name for name, _ in setters),
    )  # fmt: skip
