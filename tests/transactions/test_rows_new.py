"""``rows.new(Model, **values)`` builds the rows a posting creates without Django's per-keyword
work in ``Model.__init__``; it must build the same instance Django would."""

from __future__ import annotations

import contextlib
import datetime as dt
import uuid

import pytest
from django.db.models.signals import post_init, pre_init

from ledgerproject import rows
from organizations.models import Account, Ledger, Organization
from outbox.models import Event
from transactions.models import Operation, Transaction

NOW = dt.datetime(2026, 11, 23, 12, 0, tzinfo=dt.UTC)


def _state(obj):
    data = {k: v for k, v in obj.__dict__.items() if k != "_state"}
    return data, obj._state.adding, obj._state.db, dict(obj._state.fields_cache)


def _transaction(build):
    return build(
        Transaction,
        id=uuid.UUID(int=1),
        created_at=NOW,
        updated_at=NOW,
        organization_id=uuid.UUID(int=2),
        ledger_id=uuid.UUID(int=3),
        parent_id=None,
        template=None,
        type="T",
        description="d",
        status=Transaction.SENT,
        amount=10**37,
        scale=2,
        asset_code="BRL",
        chart_of_accounts_group_name="",
        source=["@a"],
        destination=["@b"],
        metadata={"k": 1},
        legs=[],
        expires_at=None,
    )


def django(model, **values):
    return model(**values)


@pytest.mark.parametrize("build", [django, rows.new])
def test_the_same_transaction_as_django_builds(build) -> None:
    assert _state(_transaction(build)) == _state(_transaction(django))


def test_the_same_operation_with_its_transaction_cached() -> None:
    tx = _transaction(django)
    values = dict(
        id=uuid.UUID(int=9), organization_id=tx.organization_id, ledger_id=tx.ledger_id,
        transaction=tx, account_id=uuid.UUID(int=4), account_alias="@a", portfolio_id=None,
        type="DEBIT", effect="POST", asset_code="BRL", chart_of_accounts="", description="",
        amount=5, scale=2, balance_available=10, balance_on_hold=0, balance_scale=2,
        balance_available_after=5, balance_on_hold_after=0, balance_scale_after=2,
        balance_version=3, created_at=NOW, updated_at=NOW,
    )  # fmt: skip
    ours, theirs = rows.new(Operation, **dict(values)), Operation(**dict(values))
    assert _state(ours) == _state(theirs)
    assert ours.transaction is tx and ours.transaction_id == tx.pk


def test_defaults_are_taken_as_django_takes_them() -> None:
    ours, theirs = rows.new(Event, type="x"), Event(type="x")
    assert set(ours.__dict__) == set(theirs.__dict__)
    assert ours.event_id != theirs.event_id  # a fresh default for each, as Django's
    assert ours.published_at is None and theirs.published_at is None
    assert ours._state.adding and ours._state.db is None


def test_an_unknown_keyword_is_refused_as_django_refuses_it() -> None:
    with pytest.raises(TypeError, match="unexpected keyword"):
        rows.new(Event, type="x", colour="red")


@contextlib.contextmanager
def _post_init_of(model):
    """The instances ``post_init`` is sent for, while listening to it for ``model``."""
    seen = []

    def listener(sender, instance, **kwargs):
        seen.append(instance)

    post_init.connect(listener, sender=model)
    try:
        yield seen
    finally:
        post_init.disconnect(listener, sender=model)


def test_init_signals_are_sent_when_something_listens() -> None:
    with _post_init_of(Event) as seen:
        event = rows.new(Event, type="x")
    assert seen == [event]


def test_pre_init_too_and_only_for_the_model_listened_to() -> None:
    seen = []

    def listener(sender, **kwargs):
        seen.append(sender)

    pre_init.connect(listener, sender=Event)
    try:
        rows.new(Organization, path="x")  # another model: nothing sent
        rows.new(Event, type="x")
        rows.loaded(Event, ("seq",), (1,))
    finally:
        pre_init.disconnect(listener, sender=Event)
    rows.new(Event, type="y")  # no longer listened to
    assert seen == [Event, Event]


def test_loaded_builds_the_instance_from_db_builds() -> None:
    """``rows.loaded`` (the rows the posting path reads) is ``Model.from_db``: the same
    attributes, deferred fields left out, ``_state`` of a loaded row."""
    given = {"id": uuid.UUID(int=1), "organization_id": uuid.UUID(int=2),
             "ledger_id": uuid.UUID(int=3), "alias": "@a", "deleted_at": None}  # fmt: skip
    names = [f.attname for f in Account._meta.concrete_fields if f.attname in given]  # its order
    values = [given[name] for name in names]
    ours, theirs = rows.loaded(Account, names, values), Account.from_db("default", names, values)
    assert _state(ours) == _state(theirs)
    assert not ours._state.adding and ours._state.db == "default"
    assert ours.get_deferred_fields() == theirs.get_deferred_fields()
    ours.ledger_id = uuid.UUID(int=4)  # the foreign key's own setter still works
    assert ours.ledger_id == uuid.UUID(int=4)


def test_loaded_keeps_a_foreign_key_cache_consistent() -> None:
    names = [f.attname for f in Ledger._meta.concrete_fields]
    values = [None] * len(names)
    values[names.index("id")] = uuid.UUID(int=5)
    values[names.index("organization_id")] = uuid.UUID(int=6)
    ledger = rows.loaded(Ledger, names, values)
    organization = rows.loaded(Organization, ("id", "path"), (uuid.UUID(int=6), "x"))
    ledger.organization = organization
    assert ledger.organization is organization
    ledger.organization_id = uuid.UUID(int=7)  # a new id drops the cached object, as Django's
    assert "organization" not in ledger._state.fields_cache


def test_loaded_sends_the_init_signals_when_something_listens() -> None:
    with _post_init_of(Organization) as seen:
        organization = rows.loaded(Organization, ("id", "path"), (uuid.UUID(int=6), "x"))
    assert seen == [organization]


def _every_model():
    from django.apps import apps

    return [m for m in apps.get_models() if not m._meta.abstract and not m._meta.proxy]


@pytest.mark.parametrize("model", _every_model(), ids=lambda m: m._meta.label)
def test_every_model_takes_the_defaults_django_gives_it(model) -> None:
    """A field not given takes Django's default: a constant one copied from the plan, a
    callable one made afresh for each instance (two instances never share a dict or a list)."""
    ours, theirs = rows.new(model), model()
    assert set(ours.__dict__) == set(theirs.__dict__)
    fresh = {f.attname for f in model._meta.concrete_fields if callable(f.default)}
    for name, value in theirs.__dict__.items():
        if name != "_state" and name not in fresh:
            assert ours.__dict__[name] == value, name
    again = rows.new(model)
    for name in fresh:
        value = ours.__dict__.get(name)
        if isinstance(value, dict | list):
            assert again.__dict__[name] is not value, name


def test_a_relation_s_id_given_with_its_object_is_refused() -> None:
    tx = _transaction(django)
    with pytest.raises(TypeError, match="transaction_id"):
        rows.new(Operation, transaction=tx, transaction_id=uuid.UUID(int=2))


def test_a_constant_default_is_not_made_again() -> None:
    """The plan keeps a constant default once; a callable one is called for each instance."""
    plan = rows._plan(Event)
    assert "published_at" in plan.constants
    assert "event_id" in dict(plan.computed)
    assert rows.new(Event).event_id != rows.new(Event).event_id
