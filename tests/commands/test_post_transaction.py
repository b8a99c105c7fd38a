"""post_transaction: posts through the service, prints the API's JSON, and treats an
idempotency key exactly like the API does."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from django.utils import timezone

from tests.commands.helpers import attempt, run, scope
from transactions.models import ScheduledPosting, Transaction

PAY = [
    "--template",
    "PAYMENT_WITH_FEE",
    "--var",
    "amount=2500",
    "--var",
    "fee=100",
    "--var",
    "source=@alice",
    "--var",
    "$destination=@bob",
]


@pytest.fixture
def funded(book):
    book.fund("@alice", 100_000)
    return book


def test_it_prints_the_transaction_as_the_api_renders_it(funded):
    out, _ = run("post_transaction", *scope(funded), *PAY, "--metadata", "order=42")
    printed = json.loads(out)
    shown = funded.api.get(f"{funded.url}/transactions/{printed['id']}").json()
    assert printed == shown
    assert printed["status"] == "SENT" and printed["metadata"]["order"] == "42"
    assert funded.available("@alice") == 97_400 and funded.available("@bob") == 2_500


def test_it_posts_pending_and_dry_runs(funded):
    held = json.loads(run("post_transaction", *scope(funded), *PAY, "--pending")[0])
    assert held["status"] == "PRE_APPROVED"
    count = Transaction.objects.count()
    dry = json.loads(run("post_transaction", *scope(funded), *PAY, "--dry-run")[0])
    assert dry["status"] == "SENT" and len(dry["operations"]) == 3
    assert Transaction.objects.count() == count


@pytest.mark.parametrize(
    ("change", "code"),
    [
        (["--var", "amount=99999999"], "0018"),
        (["--var", "destination=@nobody"], "0085"),
        (["--template", "NOPE"], "0007"),
    ],
)
def test_it_fails_with_the_apis_error_code_and_posts_nothing(funded, change, code):
    count = Transaction.objects.count()
    _, _, error = attempt("post_transaction", *scope(funded), *PAY, *change)
    assert str(error).startswith(code) and error.returncode == 1
    assert Transaction.objects.count() == count


def test_it_refuses_missing_and_malformed_variables(funded):
    _, _, error = attempt("post_transaction", *scope(funded), *PAY[:6])
    assert str(error).startswith("0009") and "source" in str(error)
    _, _, error = attempt("post_transaction", *scope(funded), *PAY, "--var", "oops")
    assert "Expected name=value" in str(error)


def test_an_idempotency_key_replays_like_the_api(funded):
    key = ["--idempotency-key", "order-42"]
    first, _ = run("post_transaction", *scope(funded), *PAY, *key)
    again, err = run("post_transaction", *scope(funded), *PAY, *key)
    assert json.loads(again) == json.loads(first) and "Replayed" in err
    assert Transaction.objects.filter(type="PAYMENT_WITH_FEE").count() == 1
    _, _, error = attempt("post_transaction", *scope(funded), *PAY, "--var", "fee=1", *key)
    assert str(error).startswith("0084")


def test_a_key_used_through_the_api_is_replayed_by_the_command(funded):
    body = {
        "transactionTypeCode": "PAYMENT_WITH_FEE",
        "variables": {"amount": 2500, "fee": 100, "source": "@alice", "destination": "@bob"},
    }
    api = funded.post(body, HTTP_IDEMPOTENCY_KEY="shared").json()
    out, _ = run("post_transaction", *scope(funded), *PAY, "--idempotency-key", "shared")
    assert json.loads(out) == api
    assert Transaction.objects.filter(type="PAYMENT_WITH_FEE").count() == 1


def test_it_schedules_a_posting_and_holds_that_commit_themselves(funded):
    later = (timezone.now() + dt.timedelta(hours=1)).isoformat()
    out, err = run("post_transaction", *scope(funded), *PAY, "--scheduled-for", later)
    scheduled = json.loads(out)
    assert scheduled["status"] == "SCHEDULED" and "post_scheduled" in err
    assert scheduled == funded.api.get(f"{funded.url}/scheduled-postings/{scheduled['id']}").json()
    assert funded.available("@alice") == 100_000
    again = run(
        "post_transaction", *scope(funded), *PAY, "--scheduled-for", later,
        "--idempotency-key", "later-1",
    )  # fmt: skip
    replay = run(
        "post_transaction", *scope(funded), *PAY, "--scheduled-for", later,
        "--idempotency-key", "later-1",
    )  # fmt: skip
    assert json.loads(replay[0]) == json.loads(again[0]) and "Replayed" in replay[1]
    assert ScheduledPosting.objects.count() == 2
    held = run("post_transaction", *scope(funded), *PAY, "--pending", "--commit-at", later)
    assert json.loads(held[0])["commitAt"] is not None
    *_, refused = attempt(
        "post_transaction", *scope(funded), *PAY, "--scheduled-for", later, "--dry-run"
    )
    assert "--scheduled-for" in str(refused)
