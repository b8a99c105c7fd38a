"""The one renderer of transactions and operations answers what the served schema declares:
every declared field, of its declared type, and nothing else."""

from __future__ import annotations

import json
from typing import Any

from tests.api.test_schema_for_clients import validator_for
from transactions.models import Operation, Transaction
from transactions.rendering import operations_data, transaction_data


def _closed(node: Any) -> Any:
    """The schema with every object closed: a rendered field the schema does not declare, or a
    declared one missing, fails."""
    if isinstance(node, list):
        return [_closed(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: _closed(value) for key, value in node.items()}
    if node.get("type") == "object" and "properties" in node:
        node["additionalProperties"] = False
        node["required"] = sorted(node["properties"])
    return node


def _validator(anon: Any, component: str) -> Any:
    schema = _closed(json.loads(anon.get("/v1/openapi.json").content))
    return validator_for(schema, {"$ref": f"#/components/schemas/{component}"})


def test_it_renders_every_kind_of_transaction_as_the_schema_declares(book, anon):
    book.fund("@alice", 100_000)
    plain = book.pay(2_500, 100, metadata={"order": "42", "n": 7, "ok": True}).json()
    held = book.post(
        {
            "transactionTypeCode": "PAYMENT_HELD",
            "variables": {"amount": 10, "fee": 1, "source": "@alice", "destination": "@bob"},
            "description": None,
        }
    ).json()
    book.api.post(f"{book.url}/transactions/{held['id']}/commit")
    book.api.post(f"{book.url}/transactions/{plain['id']}/revert")
    rows = list(Transaction.objects.prefetch_related("operations"))
    assert len(rows) >= 4
    transactions = _validator(anon, "TransactionOut")
    for tx in rows:
        rendered = transaction_data(tx)
        assert list(transactions.iter_errors(rendered)) == []
        fresh = Transaction.objects.get(pk=tx.pk)  # operations read through the manager
        assert transaction_data(fresh) == rendered
    operations = _validator(anon, "OperationOut")
    statement = operations_data(Operation.objects.all())
    assert len(statement) >= 8
    for rendered in statement:
        assert list(operations.iter_errors(rendered)) == []
    assert statement[0] == next(
        op
        for tx in rows
        for op in transaction_data(tx)["operations"]
        if op["id"] == statement[0]["id"]
    )


def _plain_types(value):
    """Every value in the rendering, depth first, is of a type JSON has."""
    if isinstance(value, dict):
        assert all(isinstance(k, str) for k in value)
        for v in value.values():
            _plain_types(v)
    elif isinstance(value, list):
        for v in value:
            _plain_types(v)
    else:
        assert value is None or type(value) in (str, int, bool, float), type(value)


def test_its_rendering_is_plain_json_so_the_event_keeps_it_as_it_is(book):
    """The transaction's renderer is registered as plain: its event holds the rendering
    without the conversion other resources' events go through, so it must need none."""
    from ledgerproject import jsonbytes
    from outbox import renderers
    from outbox.models import Event

    assert renderers.renders_plain(Transaction)
    book.fund("@alice", 100_000)
    book.pay(2_500, 100, metadata={"order": "42", "n": 7, "ok": True, "big": 10**30})
    for tx in Transaction.objects.prefetch_related("operations"):
        data = transaction_data(tx)
        _plain_types(data)
        assert jsonbytes.plain(data) == data
    for event in Event.objects.filter(type="transaction.posted"):
        tx = Transaction.objects.prefetch_related("operations").get(pk=event.resource_id)
        assert event.data == transaction_data(tx)
