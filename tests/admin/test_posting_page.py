"""The per-ledger posting page: pick a template, fill the form built from its variables,
preview with a dry run (nothing written), then post through ``transaction_post``."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from outbox.models import Event
from tests.admin.helpers import ledger_of, messages_of
from transactions.models import ScheduledPosting, Transaction

PAYMENT = {
    "template": "PAYMENT_WITH_FEE",
    "var_amount": "25.00",
    "var_fee": "1",
    "var_source": "@alice",
    "var_destination": "@bob",
}


@pytest.fixture
def url(book):
    book.fund("@alice", 100_000)
    return f"/admin/organizations/ledger/{ledger_of(book).pk}/post/"


def test_it_offers_the_ledgers_templates(admin_client, url):
    html = admin_client.get(url).content.decode()
    for code in ("FUND", "PAYMENT_WITH_FEE", "PAYMENT_HELD"):
        assert f'<option value="{code}"' in html
    assert 'id="posting-form"' not in html


def test_it_builds_the_form_from_the_templates_variables(admin_client, url):
    html = admin_client.get(url, {"template": "PAYMENT_WITH_FEE"}).content.decode()
    for name in ("var_amount", "var_fee", "var_source", "var_destination"):
        assert f'name="{name}"' in html
    assert 'inputmode="decimal"' in html and 'placeholder="25.00"' in html
    assert "BRL, up to 2 decimal(s), such as 25.00." in html
    assert '<option value="@bob">' in html  # the aliases offered for account variables
    fund = admin_client.get(url, {"template": "FUND"}).content.decode()
    assert 'name="var_account"' in fund and 'name="var_fee"' not in fund
    missing = admin_client.get(url, {"template": "NOPE"})
    assert any("No active template" in m for m in messages_of(missing))


def test_the_preview_shows_the_operations_and_writes_nothing(admin_client, book, url):
    before = Transaction.objects.count()
    response = admin_client.post(url, {**PAYMENT, "_preview": "1"})
    html = response.content.decode()
    assert response.status_code == 200
    assert "nothing was written" in html
    assert "26.00 BRL" in html and "974.00" in html and "1000.00" in html
    assert Transaction.objects.count() == before
    assert book.available("@alice") == 100_000


def test_it_posts_and_goes_to_the_transaction(admin_client, book, url):
    response = admin_client.post(
        url,
        {
            **PAYMENT,
            "metadata": "order=42\nchannel=desk",
            "description": "By hand",
            "_post": "1",
            "reason": "Desk request",
        },
    )
    assert response.status_code == 302
    tx = Transaction.objects.get(type="PAYMENT_WITH_FEE")
    assert response["Location"] == f"/admin/transactions/transaction/{tx.pk}/change/"
    assert tx.status == "SENT" and tx.description == "By hand"
    assert tx.metadata == {"channel": "desk", "origin": "template", "order": "42"}
    assert book.available("@alice") == 97_400 and book.available("@bob") == 2_500
    assert any("Posted" in m for m in messages_of(admin_client.get(response["Location"])))


def test_it_posts_pending_when_asked(admin_client, book, url):
    admin_client.post(url, {**PAYMENT, "pending": "true", "_post": "1", "reason": "Desk request"})
    assert Transaction.objects.get(type="PAYMENT_WITH_FEE").status == "PRE_APPROVED"
    assert book.balance("@alice")["onHold"] == 2_600


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"var_amount": "999999999"}, "0018"),
        ({"var_destination": "@nobody"}, "0085"),
        ({"var_destination": "@alice"}, "0090"),
        ({"var_amount": ""}, "This field is required"),
        ({"var_amount": "-5"}, "Enter an amount such as 25.00"),
        ({"var_amount": "2500"}, "0018"),  # 2,500.00 BRL: no longer minor units
        ({"var_amount": "25.001"}, "At most 2 decimal(s)"),
        ({"metadata": "no equals sign"}, "Line 1: expected key=value"),
    ],
)
def test_it_shows_refusals_on_the_form_and_posts_nothing(admin_client, url, change, message):
    before = Transaction.objects.count()
    response = admin_client.post(url, {**PAYMENT, **change, "_post": "1", "reason": "Desk request"})
    assert response.status_code == 200
    assert message in response.content.decode()
    assert Transaction.objects.count() == before


def _later(**delta) -> str:
    """A moment ahead, as the form's datetime-local input sends it (UTC)."""
    return (timezone.now() + dt.timedelta(**delta)).strftime("%Y-%m-%dT%H:%M")


def test_it_schedules_a_posting_for_later_and_the_admin_can_cancel_it(admin_client, book, url):
    response = admin_client.post(
        url, {**PAYMENT, "scheduled_for": _later(days=2), "_post": "1", "reason": "Desk request"}
    )
    assert response.status_code == 302
    row = ScheduledPosting.objects.get()
    assert response["Location"] == f"/admin/transactions/scheduledposting/{row.pk}/change/"
    assert (row.status, row.template_code, row.actor_kind) == (
        "SCHEDULED",
        "PAYMENT_WITH_FEE",
        "staff",
    )
    assert row.variables["amount"] == 2500
    page = admin_client.get(response["Location"])
    assert any("Scheduled" in m for m in messages_of(page))
    assert "PAYMENT_WITH_FEE" in page.content.decode()
    assert book.available("@alice") == 100_000  # nothing moved
    listed = admin_client.get("/admin/transactions/scheduledposting/")
    assert str(row.pk) in listed.content.decode()
    done = admin_client.post(
        "/admin/transactions/scheduledposting/",
        {"action": "cancel_scheduled", "_selected_action": [str(row.pk)]},
        follow=True,
    )
    assert any("canceled" in m for m in messages_of(done))
    row.refresh_from_db()
    assert row.status == "CANCELED"
    again = admin_client.post(
        "/admin/transactions/scheduledposting/",
        {"action": "cancel_scheduled", "_selected_action": [str(row.pk)]},
        follow=True,
    )
    assert any("0099" in m for m in messages_of(again))


def test_a_hold_can_be_told_when_to_commit_itself(admin_client, book, url):
    body = {
        **PAYMENT,
        "pending": "true",
        "commit_at": _later(hours=5),
        "_post": "1",
        "reason": "Desk request",
    }
    assert admin_client.post(url, body).status_code == 302
    assert Transaction.objects.get(type="PAYMENT_WITH_FEE").commit_at is not None


def test_scheduling_refusals_appear_on_their_fields(admin_client, url):
    past = (timezone.now() - dt.timedelta(days=1)).strftime("%Y-%m-%dT%H:%M")
    response = admin_client.post(
        url, {**PAYMENT, "scheduled_for": past, "_post": "1", "reason": "Desk request"}
    )
    assert response.status_code == 200
    assert "scheduledFor must be in the future" in response.content.decode()
    held = admin_client.post(
        url, {**PAYMENT, "commit_at": _later(hours=1), "_post": "1", "reason": "Desk request"}
    )
    assert "the transaction is not pending" in held.content.decode()
    assert not ScheduledPosting.objects.exists()
    assert not Transaction.objects.filter(type="PAYMENT_WITH_FEE").exists()


def test_a_posting_needs_a_reason_which_its_events_keep(admin_client, book, url):
    refused = admin_client.post(url, {**PAYMENT, "_post": "1", "reason": "  "})
    assert (
        refused.status_code == 200 and "This field is required: say why" in refused.content.decode()
    )
    assert not Transaction.objects.filter(type="PAYMENT_WITH_FEE").exists()
    previewed = admin_client.post(url, {**PAYMENT, "_preview": "1"})  # a dry run needs none
    assert 'id="preview-result"' in previewed.content.decode()
    admin_client.post(url, {**PAYMENT, "_post": "1", "reason": "Refund agreed, ticket 7"})
    tx = Transaction.objects.get(type="PAYMENT_WITH_FEE")
    (event,) = Event.objects.filter(resource_id=tx.pk, type="transaction.posted")
    assert (event.reason, event.actor_kind, event.actor_name) == (
        "Refund agreed, ticket 7", "staff", "admin"
    )  # fmt: skip
    # an API posting gives none
    api = book.pay(100, 0).json()
    assert Event.objects.get(resource_id=api["id"], type="transaction.posted").reason is None
