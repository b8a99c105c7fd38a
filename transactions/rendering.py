"""A transaction, and an operation, as the API renders them: the one renderer of both, without
DRF's per-field machinery. ``serializers.TransactionOut`` and ``OperationOut`` declare the shape
for the OpenAPI schema and render nothing; tests/performance/test_rendering.py holds the
renderer to the served schema. Its values are JSON's own types, so the
transaction's event keeps the rendering as it is (``serializers`` registers it as plain)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from ledgerproject.actors import actor_of
from ledgerproject.formats import render_timestamp, str_of


class _Texts:
    """The text of each id and instant, made once per rendering: a transaction's ids and its
    instant recur in every operation (str of a UUID and strftime were half its rendering).
    Kept by the object's identity, not its value: a UUID's hash is computed in Python, and
    cost as much as the text it saved. Each object is held until the rendering ends, so no
    identity is reused meanwhile; an equal value held by another object is only made again."""

    __slots__ = ("_held", "_texts")

    def __init__(self) -> None:
        self._texts: dict[int, str] = {}
        self._held: list[Any] = []

    def of(self, value: Any) -> str | None:
        if value is None:
            return None
        text = self._texts.get(id(value))
        if text is None:
            text = render_timestamp(value) if isinstance(value, dt.datetime) else str_of(value)
            assert text is not None
            self._texts[id(value)] = text
            self._held.append(value)
        return text


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _metadata(value: Any) -> Any:
    return None if value is None else (value or {})


def operation_data(op: Any, t: _Texts) -> dict[str, Any]:
    return {
        "id": t.of(op.id),
        "transactionId": t.of(op.transaction_id),
        "ledgerId": t.of(op.ledger_id),
        "organizationId": t.of(op.organization_id),
        "description": _text(op.description),
        "type": op.type,
        "effect": op.effect,
        "assetCode": _text(op.asset_code),
        "chartOfAccounts": _text(op.chart_of_accounts),
        "amount": {"amount": op.amount, "scale": op.scale},
        "balance": {
            "available": op.balance_available,
            "onHold": op.balance_on_hold,
            "scale": op.balance_scale,
        },
        "balanceAfter": {
            "available": op.balance_available_after,
            "onHold": op.balance_on_hold_after,
            "scale": op.balance_scale_after,
        },
        "accountId": t.of(op.account_id),
        "accountAlias": _text(op.account_alias),
        "portfolioId": t.of(op.portfolio_id),
        "metadata": _metadata(op.metadata),
        "effectiveAt": t.of(op.effective_at),
        "conversion": op.conversion,
        "createdAt": t.of(op.created_at),
        "updatedAt": t.of(op.updated_at),
    }


def operations_data(operations: Any) -> list[dict[str, Any]]:
    """Operations as the API renders them (an account's statement)."""
    t = _Texts()
    return [operation_data(op, t) for op in operations]


def transaction_data(tx: Any) -> dict[str, Any]:
    operations = tx.operation_rows()
    t = _Texts()
    return {
        "id": t.of(tx.id),
        "parentTransactionId": t.of(tx.parent_id),
        "ledgerId": t.of(tx.ledger_id),
        "organizationId": t.of(tx.organization_id),
        "description": _text(tx.description),
        "type": tx.type or None,
        "inline": tx.inline,
        "status": tx.status,
        "amount": {"amount": tx.amount, "scale": tx.scale},
        "assetCode": _text(tx.asset_code),
        "chartOfAccountsGroupName": _text(tx.chart_of_accounts_group_name),
        "source": None if tx.source is None else [_text(s) for s in tx.source],
        "destination": None if tx.destination is None else [_text(d) for d in tx.destination],
        "metadata": _metadata(tx.metadata),
        "operations": [operation_data(op, t) for op in operations],
        "expiresAt": t.of(tx.expires_at),
        "commitAt": t.of(tx.commit_at),
        "effectiveAt": t.of(tx.effective_at),
        "conversion": tx.conversion,
        "actor": actor_of(tx),
        "requestId": tx.request_id or None,
        "createdAt": t.of(tx.created_at),
        "updatedAt": t.of(tx.updated_at),
    }


def scheduled_data(row: Any) -> dict[str, Any]:
    """A scheduled posting (``serializers.ScheduledPostingOut`` declares the shape)."""
    t = _Texts()
    return {
        "id": t.of(row.id),
        "ledgerId": t.of(row.ledger_id),
        "organizationId": t.of(row.organization_id),
        "status": row.status,
        "scheduledFor": t.of(row.scheduled_for),
        "transactionTypeCode": row.template_code or None,
        "dsl": row.dsl or None,
        "variables": row.variables,
        "metadata": _metadata(row.metadata),
        "description": _text(row.description),
        "pending": row.pending,
        "parentTransactionId": t.of(row.parent_id),
        "expiresAt": t.of(row.expires_at),
        "commitAt": t.of(row.commit_at),
        "transactionId": t.of(row.transaction_id),
        "error": row.error,
        "actor": actor_of(row),
        "requestId": row.request_id or None,
        "createdAt": t.of(row.created_at),
        "updatedAt": t.of(row.updated_at),
    }
