"""The answers of postings, rendered once: by the API's views and by ``post_transaction``.

A fresh outcome is rendered with the API's transaction renderer, after COMMIT, and the rendering
is recorded on the idempotency key written with it (``record_answers``), so a replay
answers the very same body. A key whose answer was never recorded (the process died between
COMMIT and that write) is answered from what it references."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from transactions import engine, idempotency
from transactions.models import IdempotencyKey, Transaction
from transactions.prepare import with_operations
from transactions.rendering import transaction_data


def replayed_body(record: IdempotencyKey) -> Any:
    if record.response_body is not None:
        return record.response_body
    if record.transaction is not None and record.outcome is None:
        return transaction_data(with_operations(record.transaction))
    rows = record.outcome or []
    ids = [row["transactionId"] for row in rows if row.get("transactionId")]
    txs = {str(tx.pk): tx for tx in Transaction.objects.filter(pk__in=ids)}
    items = []
    for row in rows:
        tx = txs.get(row.get("transactionId") or "")
        body = transaction_data(with_operations(tx)) if tx else row.get("error")
        items.append((row["status"], body))
    if record.response_status == 201:
        return [body for _, body in items]
    return [_batch_item(i, status, body, False) for i, (status, body) in enumerate(items)]


def record_answers(
    outcomes: Sequence[engine.Outcome | engine.Batch], bodies: Sequence[Any]
) -> None:
    """After COMMIT: keep the answers rendered on the key rows written with them."""
    pairs = [(o.record, body) for o, body in zip(outcomes, bodies, strict=True) if o.record]
    idempotency.record_answers([r for r, _ in pairs], [b for _, b in pairs])


def _rendered(outcome: engine.Outcome) -> Any:
    """A posted transaction as the API renders it: the rendering the engine made for its
    event when there is one (the same function's output, as plain JSON), else rendered now."""
    if outcome.rendered is not None:
        return outcome.rendered
    assert outcome.transaction is not None
    return transaction_data(outcome.transaction)


def posting(outcome: engine.Outcome) -> tuple[int, Any, bool]:
    """``(status, body, replayed)`` of one posting."""
    if outcome.replay is not None:
        return outcome.replay.response_status, replayed_body(outcome.replay), True
    body = _rendered(outcome)
    record_answers([outcome], [body])
    return outcome.status, body, False


DRY_RUN_HEADER = "Dry-Run"


def dry_run(ledger: Any, request: engine.PostingRequest) -> dict[str, Any]:
    """What ``request`` would write, marked ``"dryRun": true``; nothing is written, so there
    is no id to keep and no idempotency key is claimed. The API adds a ``Dry-Run: true``
    header, ``post_transaction --dry-run`` says on stderr that nothing was written."""
    outcome = engine.post(ledger, request, dry_run=True)
    assert outcome.transaction is not None
    return {**transaction_data(outcome.transaction), "dryRun": True}


def _batch_item(index: int, status: int, body: Any, replayed: bool) -> dict[str, Any]:
    item: dict[str, Any] = {"index": index, "status": status}
    item["transaction" if status < 400 else "error"] = body
    if replayed:
        item["idempotentReplayed"] = True
    return item


def batch(result: engine.Batch, *, atomic: bool) -> tuple[int, Any, bool]:
    """``(status, body, replayed)`` of a batch: atomic, the transactions (201); otherwise
    each item's status and transaction or error, in order (200)."""
    if result.replay is not None:
        return result.replay.response_status, replayed_body(result.replay), True
    rendered = []
    for outcome in result.outcomes:
        if outcome.replay is not None and outcome.transaction is None:
            body = replayed_body(outcome.replay)
        elif outcome.error is not None:
            body = outcome.error.as_body()
        else:
            body = _rendered(outcome)
        rendered.append(body)
    answer: Any
    if atomic:
        answer = rendered
    else:
        answer = [
            _batch_item(i, o.status, b, o.replay is not None)
            for i, (o, b) in enumerate(zip(result.outcomes, rendered, strict=True))
        ]
    record_answers([*result.outcomes, result], [*rendered, answer])  # one statement
    return (201 if atomic else 200), answer, False
