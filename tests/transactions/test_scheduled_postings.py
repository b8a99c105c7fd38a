"""Scheduled postings and holds that commit themselves: a posting with ``scheduledFor`` is kept
(202, ``SCHEDULED``) and moves nothing until the scheduler (``manage.py post_scheduled``) posts
it when due, once, effective then; it can be canceled before; a refusal then makes it
``FAILED`` with the reason and an event. A pending hold with ``commitAt`` is committed by the
same scheduler (docs/TIME.md)."""

from __future__ import annotations

import datetime as dt
import io
import uuid

import pytest
from django.core.management import call_command
from django.utils import timezone

from ledgerproject.errors import ErrorCode, LedgerError
from ledgerproject.formats import render_timestamp
from organizations.models import Ledger
from outbox.models import Event
from tests.conftest import assert_error
from tests.transactions.conftest import HOLD, PAYMENT
from tests.transactions.test_inline import JSON, TEXT
from transactions import scheduling
from transactions.models import ScheduledPosting, Transaction

pytestmark = pytest.mark.django_db


def _in(seconds: float) -> str:
    return render_timestamp(timezone.now() + dt.timedelta(seconds=seconds))


def _payment(amount: int = 1_000, fee: int = 10, **body) -> dict:
    variables = {"amount": amount, "fee": fee, "source": "@alice", "destination": "@bob"}
    return {"transactionTypeCode": "PAYMENT_WITH_FEE", "variables": variables, **body}


def _schedule(book, body: dict, **extra) -> dict:
    response = book.post(body, **extra)
    assert response.status_code == 202, response.content
    return response.json()


def _come_due(scheduled: dict, minutes: float = 1) -> dt.datetime:
    """Time passes: the scheduled posting's moment is now ``minutes`` ago."""
    at = (timezone.now() - dt.timedelta(minutes=minutes)).replace(microsecond=0)
    ScheduledPosting.objects.filter(pk=scheduled["id"]).update(scheduled_for=at)
    return at


def _run_scheduler() -> str:
    out = io.StringIO()
    call_command("post_scheduled", "--once", stdout=out)
    return out.getvalue()


def _read(book, scheduled: dict) -> dict:
    response = book.api.get(f"{book.url}/scheduled-postings/{scheduled['id']}")
    assert response.status_code == 200, response.content
    return response.json()


def test_a_scheduled_posting_moves_nothing_until_the_scheduler_posts_it_when_due(book):
    book.fund("@alice", 5_000)
    before = Transaction.objects.count()
    scheduled = _schedule(book, _payment(scheduledFor=_in(3600), metadata={"order": "42"}))
    assert scheduled["status"] == "SCHEDULED"
    assert scheduled["transactionId"] is None and scheduled["error"] is None
    assert scheduled["transactionTypeCode"] == "PAYMENT_WITH_FEE"
    assert scheduled["actor"]["kind"] == "token"
    assert Transaction.objects.count() == before
    assert book.available("@alice") == 5_000
    created = Event.objects.get(type="scheduled_posting.created")
    assert created.data == scheduled

    assert "0 posted" in _run_scheduler()  # not due yet
    assert _read(book, scheduled)["status"] == "SCHEDULED"

    due = _come_due(scheduled)
    assert "1 posted, 0 failed" in _run_scheduler()
    posted = _read(book, scheduled)
    assert posted["status"] == "POSTED"
    tx = book.api.get(f"{book.url}/transactions/{posted['transactionId']}").json()
    assert tx["status"] == "SENT"
    assert tx["effectiveAt"] == render_timestamp(due)  # effective when it was due
    assert tx["createdAt"] > tx["effectiveAt"]
    assert tx["metadata"]["order"] == "42"
    assert tx["actor"] == scheduled["actor"]  # posted on behalf of whoever scheduled it
    assert book.available("@alice") == 5_000 - 1_010
    assert book.available("@bob") == 1_000
    assert Event.objects.get(type="scheduled_posting.posted").data == posted
    assert "0 posted" in _run_scheduler()  # once
    assert Transaction.objects.count() == before + 1


def test_the_list_filters_on_status(book):
    book.fund("@alice", 5_000)
    first = _schedule(book, _payment(scheduledFor=_in(3600)))
    second = _schedule(book, _payment(scheduledFor=_in(7200)))
    assert book.api.post(f"{book.url}/scheduled-postings/{second['id']}/cancel").status_code == 200
    listed = book.api.get(f"{book.url}/scheduled-postings").json()
    assert [row["id"] for row in listed] == [first["id"], second["id"]]
    only = book.api.get(f"{book.url}/scheduled-postings", {"status": "CANCELED"}).json()
    assert [row["id"] for row in only] == [second["id"]]


def test_a_canceled_scheduled_posting_is_never_posted(book):
    book.fund("@alice", 5_000)
    scheduled = _schedule(book, _payment(scheduledFor=_in(3600)))
    url = f"{book.url}/scheduled-postings/{scheduled['id']}/cancel"
    canceled = book.api.post(url)
    assert canceled.status_code == 200, canceled.content
    assert canceled.json()["status"] == "CANCELED"
    assert Event.objects.get(type="scheduled_posting.canceled").data["status"] == "CANCELED"
    assert_error(book.api.post(url), 422, "0099")
    _come_due(scheduled)
    assert "0 posted" in _run_scheduler()
    assert _read(book, scheduled)["status"] == "CANCELED"
    assert book.available("@alice") == 5_000


def test_a_posted_one_cannot_be_canceled_and_an_unknown_one_is_not_found(book):
    book.fund("@alice", 5_000)
    scheduled = _schedule(book, _payment(scheduledFor=_in(3600)))
    _come_due(scheduled)
    _run_scheduler()
    assert_error(
        book.api.post(f"{book.url}/scheduled-postings/{scheduled['id']}/cancel"), 422, "0099"
    )
    missing = f"{book.url}/scheduled-postings/0190f2a0-0000-7000-8000-000000000000"
    assert_error(book.api.get(missing), 404, "0007")
    assert_error(book.api.post(f"{missing}/cancel"), 404, "0007")


def test_a_refusal_when_due_fails_it_with_the_reason_and_an_event(book):
    book.fund("@alice", 500)
    scheduled = _schedule(book, _payment(amount=1_000, scheduledFor=_in(3600)))
    _come_due(scheduled)
    assert "0 posted, 1 failed" in _run_scheduler()
    failed = _read(book, scheduled)
    assert failed["status"] == "FAILED"
    assert failed["transactionId"] is None
    assert failed["error"]["code"] == "0018"  # insufficient funds, as a posting now would be
    assert Event.objects.get(type="scheduled_posting.failed").data == failed
    assert book.available("@alice") == 500
    assert "0 failed" in _run_scheduler()  # failed once, not retried


def test_a_scheduled_posting_whose_moment_was_closed_meanwhile_fails(book):
    book.fund("@alice", 5_000)
    scheduled = _schedule(book, _payment(scheduledFor=_in(3600)))
    _come_due(scheduled, minutes=3 * 24 * 60)  # the scheduler was stopped for three days
    through = (timezone.now() - dt.timedelta(days=2)).date()
    assert book.api.patch(book.url, {"closedThrough": through.isoformat()}).status_code == 200
    _run_scheduler()
    failed = _read(book, scheduled)
    assert failed["status"] == "FAILED"
    assert failed["error"]["code"] == "0124"
    assert book.available("@alice") == 5_000


def test_it_posts_with_the_template_as_it_is_when_due(book):
    book.fund("@alice", 5_000)
    changed = _schedule(book, _payment(scheduledFor=_in(3600)))
    gone = _schedule(book, {**_payment(scheduledFor=_in(3600)), "transactionTypeCode": "FUND",
                            "variables": {"amount": 5, "account": "@bob"}})  # fmt: skip
    template = f"{book.url}/transaction-templates"
    renamed = PAYMENT.replace('"Payment with fee"', '"Payment, as changed"')
    assert (
        book.api.put(f"{template}/PAYMENT_WITH_FEE", renamed, content_type="text/plain").status_code
        == 200
    )
    assert book.api.delete(f"{template}/FUND").status_code == 204
    _come_due(changed)
    _come_due(gone)
    _run_scheduler()
    posted = _read(book, changed)
    tx = book.api.get(f"{book.url}/transactions/{posted['transactionId']}").json()
    assert tx["description"] == "Payment, as changed"
    failed = _read(book, gone)
    assert (failed["status"], failed["error"]["code"]) == ("FAILED", "0007")


def test_what_is_checked_when_it_is_scheduled(book):
    cases = [
        (_payment(scheduledFor=_in(-60)), 400, "scheduledFor"),
        (_payment(scheduledFor=_in(3600), effectiveAt=_in(-60)), 400, "effectiveAt"),
        (_payment(scheduledFor=_in(3600), expiresAt=_in(1800), pending=True), 400, "expiresAt"),
        (_payment(scheduledFor=_in(3600), expiresAt=_in(7200)), 400, "expiresAt"),  # not pending
        (_payment(scheduledFor=_in(3600), pending=True, commitAt=_in(60)), 400, "commitAt"),
        ({**_payment(scheduledFor=_in(3600)), "variables": {"amount": 1}}, 400, None),
    ]
    for body, status, field in cases:
        response = book.post(body)
        assert response.status_code == status, (body, response.content)
        if field is not None:
            assert field in response.json().get("fields", {}), response.json()
    unknown = book.post({**_payment(scheduledFor=_in(3600)), "transactionTypeCode": "NOPE"})
    assert_error(unknown, 404, "0007")
    dry = book.api.post(f"{book.url}/transactions?dryRun=true", _payment(scheduledFor=_in(60)))
    assert_error(dry, 400, "0047")
    batch = book.api.post(
        f"{book.url}/transactions/batch", {"transactions": [_payment(scheduledFor=_in(60))]}
    )
    assert batch.status_code == 400, batch.content
    assert not ScheduledPosting.objects.exists()


def test_a_missing_parent_is_refused_now_and_a_hold_duration_counts_from_the_posting(book):
    missing = _payment(scheduledFor=_in(3600), parentTransactionId=str(uuid.uuid4()))
    assert_error(book.post(missing), 422, "0021")
    book.post_template(
        HOLD.replace("PAYMENT_HELD", "HELD_AN_HOUR").replace(
            "(pending true)", "(pending true) (hold-duration 3600)"
        )
    )
    book.fund("@alice", 5_000)
    body = {**_payment(scheduledFor=_in(7200)), "transactionTypeCode": "HELD_AN_HOUR"}
    scheduled = _schedule(book, body)
    due = _come_due(scheduled)
    _run_scheduler()
    tx = Transaction.objects.get(pk=_read(book, scheduled)["transactionId"])
    assert tx.status == "PRE_APPROVED"
    assert tx.expires_at > timezone.now() + dt.timedelta(minutes=59)  # an hour from the posting
    assert tx.effective_at == due


def test_an_idempotency_key_replays_the_scheduling(book):
    body = _payment(scheduledFor=_in(3600))
    first = _schedule(book, body, HTTP_IDEMPOTENCY_KEY="sched-1")
    again = book.post(body, HTTP_IDEMPOTENCY_KEY="sched-1")
    assert again.status_code == 202
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json() == first
    assert ScheduledPosting.objects.count() == 1
    other = book.post(_payment(amount=7, scheduledFor=_in(3600)), HTTP_IDEMPOTENCY_KEY="sched-1")
    assert_error(other, 422, "0084")


def test_an_inline_posting_can_be_scheduled_too(book):
    book.fund("@alice", 5_000)
    as_text = book.api.post(
        f"{book.url}/transactions/dsl", {"dsl": TEXT, "scheduledFor": _in(3600)}, format="json"
    )
    as_json = book.api.post(
        f"{book.url}/transactions/json",
        {**JSON, "variables": {"amount": 100, "source": "@alice"}, "scheduledFor": _in(3600)},
        format="json",
    )
    for response in (as_text, as_json):
        assert response.status_code == 202, response.content
        scheduled = response.json()
        assert scheduled["transactionTypeCode"] is None and "(send" in scheduled["dsl"]
        _come_due(scheduled)
    assert "2 posted" in _run_scheduler()
    for response in (as_text, as_json):
        posted = _read(book, response.json())
        assert posted["status"] == "POSTED", posted
        tx = book.api.get(f"{book.url}/transactions/{posted['transactionId']}").json()
        assert tx["inline"] is True
    assert book.available("@alice") == 5_000 - 150 - 150


def test_a_row_is_posted_once_whoever_gets_to_it(book):
    """A second scheduler reaching a row already posted (its claim lapsed, say) finds it no
    longer SCHEDULED once it holds the row's lock, and its posting is rolled back."""
    book.fund("@alice", 5_000)
    scheduled = _schedule(book, _payment(scheduledFor=_in(3600)))
    _come_due(scheduled)
    row = ScheduledPosting.objects.get(pk=scheduled["id"])
    ledger = Ledger.objects.get(pk=row.ledger_id)
    assert scheduling._post(row, ledger) == "POSTED"
    assert scheduling._post(row, ledger) is None
    assert Transaction.objects.filter(type="PAYMENT_WITH_FEE").count() == 1
    assert book.available("@alice") == 5_000 - 1_010


def test_a_row_that_breaks_the_scheduler_does_not_stop_the_others(book, monkeypatch, caplog):
    book.fund("@alice", 5_000)
    broken = _schedule(book, _payment(amount=1, scheduledFor=_in(3600)))
    fine = _schedule(book, _payment(amount=2, scheduledFor=_in(3600)))
    _come_due(broken, minutes=2)  # first in line
    _come_due(fine)
    request_of = scheduling.request_of

    def failing(row):
        if str(row.pk) == broken["id"]:
            raise RuntimeError("a fault")
        return request_of(row)

    monkeypatch.setattr(scheduling, "request_of", failing)
    assert "1 posted, 0 failed" in _run_scheduler()
    assert _read(book, fine)["status"] == "POSTED"
    assert "left" in caplog.text and "a fault" in caplog.text
    row = ScheduledPosting.objects.get(pk=broken["id"])
    assert row.status == "SCHEDULED" and row.claimed_until > timezone.now()  # its lease runs
    monkeypatch.setattr(scheduling, "request_of", request_of)
    assert "0 posted" in _run_scheduler()  # not before its lease ends
    ScheduledPosting.objects.filter(pk=broken["id"]).update(claimed_until=timezone.now())
    assert "1 posted" in _run_scheduler()


def test_a_conflict_of_the_moment_leaves_it_for_the_next_pass(book, monkeypatch):
    book.fund("@alice", 5_000)
    scheduled = _schedule(book, _payment(scheduledFor=_in(3600)))
    _come_due(scheduled)

    def conflict(*args, **kwargs):
        raise LedgerError(ErrorCode.WRITE_CONFLICT, "Retry.")

    post = scheduling.engine.post
    monkeypatch.setattr(scheduling.engine, "post", conflict)
    assert "0 posted, 0 failed" in _run_scheduler()
    row = ScheduledPosting.objects.get(pk=scheduled["id"])
    assert (row.status, row.claimed_until) == ("SCHEDULED", None)  # released at once
    monkeypatch.setattr(scheduling.engine, "post", post)
    assert "1 posted" in _run_scheduler()


def test_a_stopping_scheduler_ends_its_pass_before_the_next_posting(book):
    book.fund("@alice", 5_000)
    for amount in (1, 2, 3):
        _come_due(_schedule(book, _payment(amount=amount, scheduledFor=_in(3600))))
    asked = []

    def stopping() -> bool:
        asked.append(True)
        return len(asked) > 1  # SIGTERM arrives during the first posting

    assert scheduling.post_due(stopping=stopping).posted == 1
    assert ScheduledPosting.objects.filter(status="SCHEDULED").count() == 2


def _hold(book, **body) -> dict:
    response = book.post(_payment(pending=True, **body))
    assert response.status_code == 201, response.content
    return response.json()


def _hold_comes_due(hold: dict) -> dt.datetime:
    at = (timezone.now() - dt.timedelta(minutes=1)).replace(microsecond=0)
    Transaction.objects.filter(pk=hold["id"]).update(commit_at=at)
    return at


def test_a_hold_commits_itself_at_its_commit_at(book):
    book.fund("@alice", 5_000)
    # Held ten minutes ago, so that it can come due a minute ago.
    hold = _hold(book, commitAt=_in(3600), expiresAt=_in(7200), effectiveAt=_in(-600))
    assert hold["status"] == "PRE_APPROVED" and hold["commitAt"] is not None
    assert "0 holds committed" in _run_scheduler()
    due = _hold_comes_due(hold)
    assert "1 holds committed" in _run_scheduler()
    committed = book.api.get(f"{book.url}/transactions/{hold['id']}").json()
    assert committed["status"] == "SENT"
    settled = [op for op in committed["operations"] if op["effect"] != "HOLD"]
    assert {op["effectiveAt"] for op in settled} == {render_timestamp(due)}
    assert book.available("@bob") == 1_000
    assert Event.objects.filter(type="transaction.committed", resource_id=hold["id"]).exists()
    assert "0 holds committed" in _run_scheduler()


def test_a_hold_committed_or_canceled_first_is_left_alone(book):
    book.fund("@alice", 5_000)
    first = _hold(book, commitAt=_in(3600))
    second = _hold(book, commitAt=_in(3600))
    assert book.api.post(f"{book.url}/transactions/{first['id']}/commit").status_code == 200
    assert book.api.post(f"{book.url}/transactions/{second['id']}/cancel").status_code == 201
    _hold_comes_due(first)
    _hold_comes_due(second)
    assert "0 holds committed, 0 commits refused" in _run_scheduler()


def test_a_refused_commit_leaves_the_hold_pending_with_an_event(book):
    book.fund("@alice", 5_000)
    hold = _hold(book, commitAt=_in(3600), expiresAt=_in(7200))
    past = timezone.now() - dt.timedelta(minutes=1)
    # The scheduler was stopped past the hold's expiry: the commit is refused as expired.
    Transaction.objects.filter(pk=hold["id"]).update(
        commit_at=past - dt.timedelta(minutes=1), expires_at=past
    )
    assert "1 commits refused" in _run_scheduler()
    stored = Transaction.objects.get(pk=hold["id"])
    assert (stored.status, stored.commit_at) == ("PRE_APPROVED", None)
    event = Event.objects.get(type="transaction.commit_failed")
    assert event.data["id"] == hold["id"] and event.data["error"]["code"] == "0099"
    assert "0 commits refused" in _run_scheduler()


def test_a_scheduled_hold_whose_commit_at_passed_meanwhile_commits_at_once(book):
    """The scheduler ran late: the hold is made effective at its moment and, its commitAt
    passed too, committed in the same pass, effective then."""
    book.fund("@alice", 5_000)
    scheduled = _schedule(book, _payment(pending=True, scheduledFor=_in(3600), commitAt=_in(3601)))
    due = _come_due(scheduled, minutes=10)
    ScheduledPosting.objects.filter(pk=scheduled["id"]).update(
        commit_at=due + dt.timedelta(seconds=1)
    )
    assert "1 posted, 0 failed, 1 holds committed" in _run_scheduler()
    tx = Transaction.objects.get(pk=_read(book, scheduled)["transactionId"])
    assert tx.status == "SENT" and tx.effective_at == due
    settled = tx.operations.exclude(effect="HOLD")
    assert {op.effective_at for op in settled} == {due + dt.timedelta(seconds=1)}


def test_holds_of_a_deleted_ledger_are_left_alone(book):
    book.fund("@alice", 5_000)
    hold = _hold(book, commitAt=_in(3600))
    _hold_comes_due(hold)
    Ledger.objects.filter(pk=book.url.rsplit("/", 1)[1]).update(deleted_at=timezone.now())
    assert "0 holds committed, 0 commits refused" in _run_scheduler()
    assert Transaction.objects.get(pk=hold["id"]).status == "PRE_APPROVED"


def test_commit_at_is_checked_where_it_is_posted(book):
    book.fund("@alice", 5_000)
    for body, problem in (
        (_payment(commitAt=_in(3600)), "the transaction is not pending"),
        (_payment(pending=True, commitAt=_in(-60)), "in the past"),
        (_payment(pending=True, commitAt=_in(7200), expiresAt=_in(3600)), "not before"),
    ):
        body = assert_error(book.post(body), 400, "0047")
        assert problem in body["fields"]["commitAt"]
