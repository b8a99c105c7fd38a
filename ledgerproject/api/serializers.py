"""Input serializer base: refuses unknown fields (0053) and fields that may not be edited (0006)."""

from __future__ import annotations

from typing import Any, ClassVar

from rest_framework import serializers

from ledgerproject.errors import ErrorCode, LedgerError


class InputSerializer(serializers.Serializer):
    """Declares what a request body may hold.

    ``unmodifiable`` names fields that exist on the resource but may not be sent in this body
    (0006), so that a client sending ``legalDocument`` in a PATCH learns why it is refused.
    """

    unmodifiable: ClassVar[frozenset[str]] = frozenset()

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, dict):
            raise LedgerError(ErrorCode.BAD_REQUEST, "The request body must be a JSON object.")
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
        return super().to_internal_value(data)


def validated(serializer_class: type[InputSerializer], data: Any, **kwargs: Any) -> dict[str, Any]:
    serializer = serializer_class(data=data, **kwargs)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)
