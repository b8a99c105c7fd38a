"""``TransactionIn.quick``: the usual posting body validated without DRF's per-field machinery.
It must answer exactly what the serializer answers, or None (and the serializer decides). The
bodies are generated around its edges: every key the serializer knows and some it does not,
codes of every kind of character and length, variables and ``pending`` of every JSON type."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ledgerproject.api.serializers import validated
from transactions.serializers import TransactionBatchItemIn, TransactionIn

json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=5)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
codes = st.one_of(
    st.text(alphabet=st.characters(codec="ascii"), max_size=102),
    st.text(max_size=12),
    st.sampled_from(
        ["TRANSFER", " TRANSFER", "TRANSFER ", "", " ", "A" * 100, "A" * 101, "a\x00b"]
    ),
    json_values,
)
KEYS = {
    "transactionTypeCode": codes,
    "variables": st.one_of(
        st.dictionaries(st.text(max_size=5), json_values, max_size=3), json_values
    ),
    "pending": json_values,
    "metadata": json_values,
    "description": json_values,
    "parentTransactionId": json_values,
    "expiresAt": json_values,
    "idempotencyKey": json_values,
    "unknown": json_values,
}
bodies = st.one_of(
    st.fixed_dictionaries({}, optional=KEYS),
    st.fixed_dictionaries(
        {"transactionTypeCode": codes},
        optional={
            "variables": KEYS["variables"],
            "pending": KEYS["pending"],
        },
    ),
    json_values,
)


def _drf(body: Any) -> dict[str, Any] | None:
    serializer = TransactionIn(data=body)
    try:
        valid = serializer.is_valid()
    except Exception:  # noqa: BLE001 - a refusal raised instead of collected is a refusal too
        return None
    return dict(serializer.validated_data) if valid else None


@settings(max_examples=600, deadline=None)
@given(bodies)
def test_quick_answers_what_the_serializer_answers_or_nothing(body: Any) -> None:
    found = TransactionIn.quick(body)
    if found is not None:
        assert found == _drf(body)
        assert type(found["template_code"]) is str


def test_the_usual_bodies_take_the_quick_way() -> None:
    for body in (
        {"transactionTypeCode": "TRANSFER", "variables": {"amount": 100, "source": "@a"}},
        {"transactionTypeCode": "PAYMENT_HELD", "variables": {}, "pending": True},
        {"transactionTypeCode": "FUND"},
    ):
        found = TransactionIn.quick(body)
        assert found is not None and found == _drf(body)
        assert validated(TransactionIn, body) == found


def test_a_subclass_does_not_inherit_the_quick_way() -> None:
    """A batch item has a field of its own (its key): it is validated by its serializer."""
    body = {"transactionTypeCode": "TRANSFER", "variables": {}}
    assert "quick" not in TransactionBatchItemIn.__dict__
    assert validated(TransactionBatchItemIn, body) == _drf(body)
