"""An input serializer instance binds its own copies of the declared fields (shallow copies
for fields without a child, ``InputSerializer.get_fields``) and the declared fields stay
unbound; a class that ``shares_fields`` (the posting bodies) binds them once, to an instance of
its own, and its plain instances share them: they have nothing of their own a field reads."""

from __future__ import annotations

import threading

from rest_framework import serializers

from ledgerproject.api.serializers import InputSerializer
from transactions.serializers import CommitIn, TransactionBatchIn, TransactionIn


def test_two_instances_bind_their_own_fields() -> None:
    assert not CommitIn.shares_fields
    first, second = CommitIn(data={}), CommitIn(data={})
    for name, field in first.fields.items():
        other = second.fields[name]
        assert field is not other
        assert field.parent is first and other.parent is second
        declared = CommitIn._declared_fields[name]
        assert declared is not field and getattr(declared, "parent", None) is None


def test_a_posting_body_shares_fields_bound_once() -> None:
    assert TransactionIn.shares_fields
    first, second = TransactionIn(data={}), TransactionIn(data={})
    assert first.fields is second.fields
    for name, field in first.fields.items():
        assert field.parent is not first and field.parent is not second
        assert type(field.parent) is TransactionIn and field.root.parent is None
        assert not field.root.partial and field.root._context == {}
        declared = TransactionIn._declared_fields[name]
        assert declared is not field and getattr(declared, "parent", None) is None
    assert list(first.fields) == list(TransactionIn().get_fields())


def test_with_a_context_or_partial_a_posting_body_binds_its_own() -> None:
    shared = TransactionIn(data={}).fields
    for serializer in (
        TransactionIn(data={}, context={"current": {}}),
        TransactionIn(data={}, partial=True),
    ):
        assert serializer.fields is not shared
        assert all(field.parent is serializer for field in serializer.fields.values())


class _Inner(InputSerializer):
    shares_fields = True
    amount = serializers.IntegerField()


class _Outer(InputSerializer):
    inner = _Inner()


def test_a_nested_sharing_serializer_binds_its_own() -> None:
    outer = _Outer(data={"inner": {}}, partial=True)
    inner = outer.fields["inner"]
    assert inner.fields["amount"].root is outer
    # A nested object is sent whole, even in a partial body (a PATCH): its missing field is
    # named, under the nested object's name.
    assert not outer.is_valid()
    assert [e.code for e in outer.errors["inner"]["amount"]] == ["required"]
    assert _Outer(data={"inner": {"amount": 1}}, partial=True).is_valid()


def test_threads_validating_at_once_get_their_own_answers() -> None:
    bodies = [
        {"transactionTypeCode": f"T{n}", "description": "x" * (1999 + n % 4), "pending": n % 2 == 0}
        for n in range(200)
    ]
    answers: dict[int, object] = {}

    def run(start: int) -> None:
        for n in range(start, len(bodies), 4):
            serializer = TransactionIn(data=bodies[n])
            answers[n] = serializer.validated_data if serializer.is_valid() else serializer.errors

    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for n, body in enumerate(bodies):
        if len(body["description"]) > 2000:
            assert set(answers[n]) == {"description"}, answers[n]
        else:
            assert answers[n]["template_code"] == f"T{n}", answers[n]
            assert answers[n]["pending"] is (n % 2 == 0)


def test_a_field_with_a_child_is_copied_whole() -> None:
    first, second = TransactionBatchIn(data={}), TransactionBatchIn(data={})
    for name, field in first.fields.items():
        child = getattr(field, "child", None)
        if child is not None:
            assert child is not second.fields[name].child
            assert child.parent is field


def test_the_answers_are_the_same_for_each_instance() -> None:
    body = {"transactionTypeCode": "T", "description": "x" * 2001, "pending": "yes"}
    errors = []
    for _ in range(2):
        serializer = TransactionIn(data=body)
        assert not serializer.is_valid()
        errors.append(serializer.errors)
    assert errors[0] == errors[1]
    assert set(errors[0]) == {"description", "pending"}
