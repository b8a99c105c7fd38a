"""The hand-written transaction renderer answers exactly what ``TransactionOut`` does."""

from __future__ import annotations

from transactions.models import Transaction
from transactions.serializers import TransactionOut, transaction_data


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
