"""Input serializer base: refuses unknown fields (0053), fields that may not be edited (0006)
and values of the wrong JSON type (0047)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, ClassVar

from django.utils.functional import cached_property
from rest_framework import serializers
from rest_framework.utils.serializer_helpers import BindingDict

from ledgerproject.errors import ErrorCode, LedgerError


class InputSerializer(serializers.Serializer):
    """Declares what a request body may hold.

    ``unmodifiable`` names fields that exist on the resource but may not be sent in this body
    (0006), so that a client sending ``legalDocument`` in a PATCH learns why it is refused.
    A field sent back with the value it has (the context's ``current``: the resource as the
    API renders it) is no change, so no error: it is dropped, whatever it is.
    """

    unmodifiable: ClassVar[frozenset[str]] = frozenset()
    # Whether the instances of this class with no context, not partial and not nested share
    # their bound fields (``fields``): only for a body of plain fields, no nested serializer.
    shares_fields: ClassVar[bool] = False
    # Whether the object may be sent empty (``{}``), meaning none (an organization's address):
    # its required fields are required only of an object that holds any. The schema says so
    # (``schema.declare_what_the_server_enforces``).
    empty_is_none: ClassVar[bool] = False

    @cached_property
    def fields(self) -> Any:
        """The bound fields. A class that ``shares_fields`` builds them once and its instances
        share them when they have no context, are not partial and are not nested (how every
        posting's body is parsed: building them was half of its validation's time, a thousand
        times over for a batch). A bound field keeps only what it was declared and bound with;
        what it reads of its serializer while validating is the root's ``partial`` and
        ``context``, which are the same (false, empty) for all those instances. Any other
        instance builds its own, as DRF does."""
        if not self.shares_fields or self.partial or self.parent is not None or self.context:
            return _own_fields(self)
        cls = type(self)
        shared = _SHARED_FIELDS.get(cls)
        if shared is None:
            shared = _SHARED_FIELDS[cls] = _own_fields(cls())
        return shared

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, dict):
            raise LedgerError(ErrorCode.BAD_REQUEST, "The request body must be a JSON object.")
        if self.empty_is_none and not data:
            return {}
        current = self.context.get("current") or {}
        unchanged = {
            k for k in data if k in self.unmodifiable and k in current and same(data[k], current[k])
        }
        data = {k: v for k, v in data.items() if k not in unchanged}
        locked = sorted(k for k in data if k in self.unmodifiable)
        if locked:
            raise LedgerError(
                ErrorCode.UNMODIFIABLE_FIELD,
                f"These fields cannot be modified: {', '.join(locked)}.",
                fields={k: "cannot be modified" for k in locked},
            )
        unknown = sorted(set(data) - set(self.fields))
        if unknown:
            raise LedgerError(
                ErrorCode.UNEXPECTED_FIELDS,
                f"Unexpected fields in the request: {', '.join(unknown)}.",
                fields={k: "unexpected field" for k in unknown},
            )
        if self.parent is not None and getattr(self.root, "partial", False):
            # A nested object (an address) is one value of the resource, sent whole: a PATCH
            # changes the resource's fields, not parts of one. Under a partial root DRF would
            # skip its missing required fields, and store the object without them.
            missing = {
                name: [field.error_messages["required"]]
                for name, field in self.fields.items()
                if field.required and name not in data
            }
            if missing:
                raise serializers.ValidationError(missing, code="required")
        wrong = {
            name: message
            for name, (accepts, message) in _text_plan(self)
            if name in data and not accepts(data[name])
        }
        if wrong:
            # A ValidationError, not a LedgerError: a nested body's names get their prefix
            # ("address.line1") from DRF on the way up.
            raise serializers.ValidationError(wrong)
        return super().to_internal_value(data)


_SHARED_FIELDS: dict[type, Any] = {}

# Fields whose JSON value is a string. DRF is lenient with them: a CharField turns a number into
# text (5 into "5"), a UUIDField a number or a boolean into an id (true into 00000000-...-0001),
# a ChoiceField matches str(value). The contract says a wrong type is 400 0047, so these take a
# JSON string and nothing else (null is the field's own affair: allow_null).
TEXT_FIELDS = (
    serializers.CharField,
    serializers.UUIDField,
    serializers.ChoiceField,
    serializers.DateTimeField,
    serializers.DateField,
    serializers.TimeField,
)
Rule = tuple[Callable[[Any], bool], str]
_TEXT_PLANS: dict[type, tuple[tuple[str, Rule], ...]] = {}


def _text_plan(serializer: InputSerializer) -> tuple[tuple[str, Rule], ...]:
    """The serializer's fields that hold strings, or lists or objects of strings, each with its
    rule, worked out once per class. A nested body is an ``InputSerializer`` and checks its own."""
    cls = type(serializer)
    plan = _TEXT_PLANS.get(cls)
    if plan is None:
        found = ((name, _text_rule(field)) for name, field in serializer.fields.items())
        plan = _TEXT_PLANS[cls] = tuple(
            (name, (rule[0], f"{rule[1][0].upper()}{rule[1][1:]}."))
            for name, rule in found
            if rule is not None
        )
    return plan


def _is_text(value: Any) -> bool:
    return value is None or type(value) is str


def _text_rule(field: serializers.Field | None) -> Rule | None:
    """What ``field`` accepts and what it says of anything else; None when the field checks the
    type itself (a strict integer, metadata, a nested body)."""
    if field is None or field.read_only or isinstance(field, InputSerializer):
        return None
    if isinstance(field, serializers.MultipleChoiceField):
        return _each(_is_text), "each item must be a string"
    if isinstance(field, TEXT_FIELDS):
        return _is_text, "must be a string"
    if isinstance(field, serializers.ListSerializer | serializers.ListField):
        rule = _text_rule(field.child)
        return None if rule is None else (_each(rule[0]), f"each item {rule[1]}")
    if isinstance(field, serializers.DictField):
        rule = _text_rule(field.child)
        return None if rule is None else (_values(rule[0]), f"each value {rule[1]}")
    return None


def _each(accepts: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: not isinstance(value, list) or all(accepts(item) for item in value)


def _values(accepts: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: not isinstance(value, dict) or all(accepts(v) for v in value.values())


def _own_fields(serializer: InputSerializer) -> Any:
    """DRF's ``fields`` for this one instance (bound to it)."""
    fields = BindingDict(serializer)
    for key, value in serializer.get_fields().items():
        fields[key] = value
    return fields


def same(sent: Any, stored: Any) -> bool:
    """Equal as JSON (so ``1`` is not ``true``, and key order does not matter)."""
    return json.dumps(sent, sort_keys=True, default=str) == json.dumps(
        stored, sort_keys=True, default=str
    )


def validated(serializer_class: type[InputSerializer], data: Any, **kwargs: Any) -> dict[str, Any]:
    """The body validated by the serializer."""
    serializer = serializer_class(data=data, **kwargs)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)
