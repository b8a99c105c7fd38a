"""Rules the engine holds itself, whatever entry point calls it (API, admin, commands)."""

from __future__ import annotations

import pytest

from ledgerproject.errors import LedgerError
from tests.admin.helpers import ledger_of
from transactions import engine
from transactions.models import Transaction


@pytest.mark.parametrize(
    ("metadata", "code"),
    [
        ({"a": {"b": [1]}}, "0067"),
        ({f"k{i}": i for i in range(51)}, "0047"),
        ({"k": "x" * 2001}, "0051"),
    ],
)
def test_the_engine_refuses_metadata_the_api_refuses(book, metadata, code):
    ledger = ledger_of(book)
    request = engine.PostingRequest(
        template_code="FUND", variables={"amount": 1, "account": "@alice"}, metadata=metadata
    )
    before = Transaction.objects.count()
    with pytest.raises(LedgerError) as refused:
        engine.post(ledger, request)
    assert refused.value.error.code == code
    assert Transaction.objects.count() == before
