"""The OpenAPI description of the inline posting bodies (``templates_dsl.inline`` builds the
tree; this states the same shape, with the lexer's patterns, for clients and fuzzers)."""

from __future__ import annotations

from typing import Any

from templates_dsl.checks import MAX_SCALE
from templates_dsl.limits import MAX_LEGS, MAX_TEMPLATE_BYTES, MAX_VARIABLES

NAME = {"type": "string", "pattern": r"^[A-Za-z0-9_.\-/]+$", "maxLength": 256}
ASSET = {"type": "string", "pattern": r"^[A-Z0-9]+$", "maxLength": 100}
VARIABLE = {"type": "string", "pattern": r"^\$?[A-Za-z_][A-Za-z0-9_]*$", "maxLength": 100}
ALIAS = {"type": "string", "pattern": r"^@[A-Za-z0-9_\-/.]{1,100}$"}
TEXT = {"type": "string", "nullable": True, "maxLength": 2000}


def _closed(properties: dict[str, Any], *required: str) -> dict[str, Any]:
    closed = {"type": "object", "properties": properties, "additionalProperties": False}
    return {**closed, "required": list(required)} if required else closed


AMOUNT = _closed(
    {
        "terms": {
            "type": "array",
            "minItems": 1,
            "maxItems": MAX_VARIABLES,
            "items": {
                "oneOf": [
                    _closed({"variable": VARIABLE}, "variable"),
                    _closed(
                        {"literal": {"type": "integer", "minimum": 0, "maximum": 10**18}},
                        "literal",
                    ),
                ]
            },
        },
        "scale": {"type": "integer", "minimum": 0, "maximum": MAX_SCALE},
    },
    "terms",
    "scale",
)
ACCOUNT = {
    "oneOf": [_closed({"alias": ALIAS}, "alias"), _closed({"variable": VARIABLE}, "variable")]
}
LEG = _closed(
    {
        "account": ACCOUNT,
        "asset": ASSET,
        "amount": AMOUNT,
        "description": TEXT,
        "chartOfAccounts": {**NAME, "nullable": True},
    },
    "account",
    "asset",
    "amount",
)
REMAINING = _closed(
    {"account": ACCOUNT, "description": TEXT, "chartOfAccounts": {**NAME, "nullable": True}},
    "account",
)
VARIABLES = {
    "type": "object",
    "maxProperties": MAX_VARIABLES,
    "additionalProperties": {"oneOf": [{"type": "integer", "minimum": 0}, {"type": "string"}]},
    "description": "Variable name (with or without $) to an amount in minor units or an alias.",
}
METADATA = {
    "type": "object",
    "maxProperties": 100,
    "additionalProperties": {
        "oneOf": [{"type": "string", "maxLength": 2000}, {"type": "integer"}, {"type": "boolean"}]
    },
}
INLINE_JSON = _closed(
    {
        "chartOfAccountsGroupName": NAME,
        "code": {**NAME, "description": "Optional; not stored (an inline posting has no code)."},
        "description": TEXT,
        "pending": {"type": "boolean", "nullable": True},
        "metadata": METADATA,
        "send": _closed(
            {
                "asset": ASSET,
                "amount": AMOUNT,
                "source": {"type": "array", "minItems": 1, "maxItems": MAX_LEGS, "items": LEG},
            },
            "asset",
            "amount",
            "source",
        ),
        "convert": {
            **_closed(
                {
                    "asset": ASSET,
                    "scale": {"type": "integer", "minimum": 0, "maximum": 18},
                    "rateSource": {"type": "string", "maxLength": 256, "nullable": True},
                },
                "asset",
                "scale",
            ),
            "nullable": True,
            "description": "Deliver the send in this asset at this scale, at the ledger's "
            "stored rate (docs/CONVERSIONS.md); the destinations then name it.",
        },
        "distribute": _closed(
            {
                "to": {"type": "array", "maxItems": MAX_LEGS, "items": LEG},
                "remaining": {**REMAINING, "nullable": True},
            },
            "to",
        ),
        "variables": VARIABLES,
        "parentTransactionId": {"type": "string", "format": "uuid", "nullable": True},
        "expiresAt": {"type": "string", "format": "date-time", "nullable": True},
        "effectiveAt": {"type": "string", "format": "date-time", "nullable": True},
        "rate": {
            **_closed(
                {
                    "id": {"type": "string", "format": "uuid", "nullable": True},
                    "expected": {
                        **_closed(
                            {
                                "amount": {"type": "integer", "minimum": 1},
                                "scale": {"type": "integer", "minimum": 0, "maximum": 18},
                            },
                            "amount",
                            "scale",
                        ),
                        "nullable": True,
                    },
                    "toleranceBps": {"type": "integer", "minimum": 0, "maximum": 10000},
                }
            ),
            "nullable": True,
            "description": "For a template that converts: the rate it may convert at.",
        },
    },
    "chartOfAccountsGroupName",
    "send",
    "distribute",
)
DSL_TEXT = {"type": "string", "minLength": 1, "maxLength": MAX_TEMPLATE_BYTES}
