"""Each input serializer instance binds its own copies of the declared fields (shallow copies
for fields without a child, ``InputSerializer.get_fields``): two requests validating at once
never share a bound field, and the declared fields stay unbound."""

from __future__ import annotations

from transactions.serializers import TransactionBatchIn, TransactionIn


def test_two_instances_bind_their_own_fields() -> None:
    first, second = TransactionIn(data={}), TransactionIn(data={})
    for name, field in first.fields.items():
        other = second.fields[name]
        assert field is not other
        assert field.parent is first and other.parent is second
        declared = TransactionIn._declared_fields[name]
        assert declared is not field and getattr(declared, "parent", None) is None


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
