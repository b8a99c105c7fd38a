"""The hand-written transaction renderer answers exactly what ``TransactionOut`` does."""

from __future__ import annotations

from transactions.models import Transaction
from transactions.rendering import transaction_data
from transactions.serializers import TransactionOut


def test_it_renders_every_kind_of_transaction_like_the_serializer(book):
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
    for tx in rows:
        assert transaction_data(tx) == TransactionOut(tx).data
        fresh = Transaction.objects.get(pk=tx.pk)  # operations read through the manager
        assert transaction_data(fresh) == TransactionOut(fresh).data


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
