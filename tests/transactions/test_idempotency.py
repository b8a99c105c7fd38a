"""Idempotency keys and tolerance (docs/TRANSACTIONS.md, Idempotency)."""

from __future__ import annotations

import datetime as dt
import io
import re

import pytest
from django.core.management import call_command
from django.utils import timezone

from tests.conftest import assert_error
from transactions import idempotency
from transactions.models import IdempotencyKey, Transaction

BODY = {"transactionTypeCode": "FUND", "variables": {"amount": 100, "account": "@alice"}}


def test_it_replays_the_first_answer_for_the_same_key(book):
    first = book.post(BODY, HTTP_IDEMPOTENCYKEY="k-1")
    assert first.status_code == 201
    second = book.post(BODY, HTTP_IDEMPOTENCYKEY="k-1")
    assert second.status_code == 201
    assert second["Idempotent-Replayed"] == "true"
    assert second.json() == first.json()
    assert Transaction.objects.count() == 1
    assert book.available("@alice") == 100


def test_it_accepts_the_standard_header_name(book):
    book.post(BODY, HTTP_IDEMPOTENCY_KEY="k-2")
    again = book.post(BODY, HTTP_IDEMPOTENCYKEY="k-2")
    assert again["Idempotent-Replayed"] == "true"


def test_it_refuses_the_same_key_with_another_body(book):
    book.post(BODY, HTTP_IDEMPOTENCYKEY="k-3")
    other = {**BODY, "variables": {"amount": 101, "account": "@alice"}}
    assert_error(book.post(other, HTTP_IDEMPOTENCYKEY="k-3"), 422, "0084")


def test_it_stores_nothing_when_the_request_fails(book):
    pay = {
        "transactionTypeCode": "PAYMENT_WITH_FEE",
        "variables": {"amount": 100, "fee": 0, "source": "@alice", "destination": "@bob"},
    }
    assert_error(book.post(pay, HTTP_IDEMPOTENCYKEY="k-4"), 422, "0018")
    assert not IdempotencyKey.objects.exists()
    book.fund("@alice", 100)
    assert book.post(pay, HTTP_IDEMPOTENCYKEY="k-4").status_code == 201


def test_it_scopes_keys_to_the_ledger(book, api, organization):
    book.post(BODY, HTTP_IDEMPOTENCYKEY="shared")
    assert IdempotencyKey.objects.get().ledger_id is not None
    assert IdempotencyKey.objects.filter(key="shared").count() == 1


def test_it_uses_tolerance_as_a_duplicate_window_without_a_key(book):
    first = book.post(BODY, HTTP_TOLERANCE="60")
    second = book.post(BODY, HTTP_TOLERANCE="60")
    assert second["Idempotent-Replayed"] == "true"
    assert second.json()["id"] == first.json()["id"]
    third = book.post(BODY)
    assert third.status_code == 201 and third.json()["id"] != first.json()["id"]


def test_it_uses_tolerance_as_the_key_lifetime(book):
    book.post(BODY, HTTP_IDEMPOTENCYKEY="short", HTTP_TOLERANCE="5")
    record = IdempotencyKey.objects.get(key="short")
    assert (
        dt.timedelta(seconds=4) < record.expires_at - record.created_at <= dt.timedelta(seconds=5)
    )
    IdempotencyKey.objects.filter(key="short").update(expires_at=timezone.now())
    again = book.post(BODY, HTTP_IDEMPOTENCYKEY="short")
    assert again.status_code == 201 and "Idempotent-Replayed" not in again
    assert Transaction.objects.count() == 2


def test_it_refuses_bad_tolerance_and_keys(book):
    assert_error(book.post(BODY, HTTP_TOLERANCE="-1"), 400, "0047")
    assert_error(book.post(BODY, HTTP_TOLERANCE="604801"), 400, "0047")
    assert_error(book.post(BODY, HTTP_TOLERANCE="abc"), 400, "0047")
    assert_error(book.post(BODY, HTTP_IDEMPOTENCYKEY="x" * 256), 400, "0047")


@pytest.mark.parametrize("sent", ["", "0000005", "1e3", "5.0", "+5", "60 s", "６０"])
def test_a_tolerance_outside_its_documented_pattern_is_refused(book, sent):
    # The schema declares the header's pattern (headers travel as text); the server reads the
    # same pattern, so a value it documents as invalid is never accepted.
    assert re.fullmatch(idempotency.TOLERANCE_PATTERN, sent) is None
    assert_error(book.post(BODY, HTTP_TOLERANCE=sent), 400, "0047")
    dry_run = book.api.post(f"{book.url}/transactions?dryRun=true", BODY, HTTP_TOLERANCE=sent)
    assert_error(dry_run, 400, "0047")


@pytest.mark.parametrize("sent", ["0", "7", "00060", "604800"])
def test_a_tolerance_inside_its_pattern_is_accepted(book, sent):
    assert re.fullmatch(idempotency.TOLERANCE_PATTERN, sent) is not None
    assert book.post(BODY, HTTP_TOLERANCE=sent).status_code == 201


def test_it_purges_expired_keys(book):
    book.post(BODY, HTTP_IDEMPOTENCYKEY="old")
    book.post(BODY, HTTP_IDEMPOTENCYKEY="new")
    IdempotencyKey.objects.filter(key="old").update(expires_at=timezone.now() - dt.timedelta(1))
    out = io.StringIO()
    call_command("purge_idempotency_keys", stdout=out)
    assert "1" in out.getvalue()
    assert list(IdempotencyKey.objects.values_list("key", flat=True)) == ["new"]
