"""A request that ran on what the process keeps (``ledgerproject.kept``) and found it stale is
made again once, the ordinary way, by its view (``ScopedAPIView.handle_exception``, the one
place anything is made again); the engine makes nothing again itself, and outside an API request
(the back office, the commands) nothing runs on copies. Changes are made in plain SQL, as another
process would make them. PostgreSQL only: copies are kept only there."""

from __future__ import annotations

import pytest
from django.db import connection

from ledgerproject.api.views import ScopedAPIView
from organizations.models import Ledger
from tests.transactions.conftest import payment, recorded
from transactions import engine
from transactions.models import Transaction

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="needs PostgreSQL: templates, ledgers and tokens are kept in memory only there",
    ),
]

CHANGED = "Changed elsewhere"


@pytest.fixture
def warm(book):
    """A funded book whose template, token and ledger this process keeps."""
    book.fund("@alice", 1_000)
    assert book.pay(1, 0).status_code == 201
    return book


def _change_the_template_elsewhere() -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE templates_dsl_transactiontemplate SET updated_at = now(), "
            "text = replace(text, '(description \"Payment with fee\")', %s) "
            "WHERE code = 'PAYMENT_WITH_FEE'",
            [f'(description "{CHANGED}")'],
        )
        assert cursor.rowcount == 1


@pytest.mark.parametrize("key", [None, "k-made-again"])
def test_a_template_changed_elsewhere_makes_the_request_again_once(warm, monkeypatch, key):
    before = Transaction.objects.count()
    _change_the_template_elsewhere()
    attempts = recorded(monkeypatch, engine, "_attempt", lambda *a, **k: None)
    again = recorded(monkeypatch, ScopedAPIView, "_without_copies", lambda *a, **k: None)
    extra = {"HTTP_IDEMPOTENCY_KEY": key} if key else {}
    response = warm.post(payment(10, 1), **extra)
    assert response.status_code == 201, response.content
    assert response.json()["description"] == CHANGED
    assert len(attempts) == 2 and len(again) == 1  # the first attempt wrote nothing
    assert Transaction.objects.count() == before + 1
    assert warm.available("@alice") == 1_000 - 1 - 11


def test_outside_a_request_the_engine_reads_templates_from_the_database(warm, monkeypatch):
    ledger = Ledger.objects.get(pk=warm.url.rsplit("/", 1)[1])
    _change_the_template_elsewhere()
    attempts = recorded(monkeypatch, engine, "_attempt", lambda *a, **k: None)
    variables = {"amount": 10, "fee": 1, "source": "@alice", "destination": "@bob"}
    request = engine.PostingRequest(template_code="PAYMENT_WITH_FEE", variables=variables)
    outcome = engine.post(ledger, request)
    assert outcome.transaction.description == CHANGED
    assert len(attempts) == 1  # never planned from the kept template, so never made again
