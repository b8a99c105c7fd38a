"""The back office for events: subscriptions created and changed through the services (the
secret shown once, a bad URL refused with the API's code), deliveries with their attempts, and
staff's retry."""

from __future__ import annotations

import datetime as dt
import uuid

import pytest
from django.db import transaction
from django.utils import timezone

from organizations.models import Ledger
from outbox import webhooks
from outbox.models import Delivery, DeliveryAttempt, Event, WebhookSubscription
from tests.admin.helpers import messages_of, run_action, staff_client
from tests.outbox.receiver import Receiver
from tests.outbox.test_delivery import verify

pytestmark = pytest.mark.django_db


def _form(organization_id, url="https://example.com/h"):
    return {
        "organization_id": organization_id,
        "ledger_id": "",
        "url": url,
        "event_types": ["transaction.posted"],
        "status": "ACTIVE",
        "description": "",
    }


def test_staff_create_a_subscription_and_see_its_secret_once(organization):
    client = staff_client("outbox.add_webhooksubscription", "outbox.view_webhooksubscription")
    response = client.post(
        "/admin/outbox/webhooksubscription/add/", _form(organization["id"]), follow=True
    )
    assert response.status_code == 200
    created = WebhookSubscription.objects.get()
    assert any(created.secret in m for m in messages_of(response))
    page = client.get(f"/admin/outbox/webhooksubscription/{created.pk}/change/")
    assert created.secret not in page.content.decode()


def test_the_admin_refuses_what_the_api_refuses(organization):
    client = staff_client("outbox.add_webhooksubscription")
    response = client.post(
        "/admin/outbox/webhooksubscription/add/", _form(organization["id"], "ftp://x/")
    )
    assert response.status_code == 200 and "0120" in response.content.decode()
    assert not WebhookSubscription.objects.exists()


def test_staff_see_attempts_and_retry_a_failed_delivery(organization):
    now = timezone.now()
    subscription = WebhookSubscription.objects.create(
        organization_id=organization["id"], url="https://example.com/h", event_types=["*"],
        secret="whsec_x", created_at=now, updated_at=now,
    )  # fmt: skip
    event = Event.objects.filter(type="organization.created").get()
    delivery = Delivery.objects.create(subscription=subscription, event=event, status="FAILED",
        attempts=8, next_attempt_at=now, created_at=now, updated_at=now)  # fmt: skip
    DeliveryAttempt.objects.create(delivery=delivery, number=8, started_at=now, status_code=503,
                                   response_body="busy upstream")  # fmt: skip
    client = staff_client(
        "outbox.view_delivery", "outbox.change_delivery", "outbox.view_deliveryattempt"
    )
    page = client.get(f"/admin/outbox/delivery/{delivery.pk}/change/").content.decode()
    assert "busy upstream" in page and "503" in page
    run_action(client, "outbox/delivery", "retry", delivery.pk)
    delivery.refresh_from_db()
    assert delivery.status == Delivery.PENDING and delivery.attempts == 0
    viewer = staff_client("outbox.view_delivery", username="viewer")
    assert "retry" not in viewer.get("/admin/outbox/delivery/").content.decode()


def test_staff_see_a_subscriptions_last_error_and_suspension(organization):
    now = timezone.now()
    subscription = WebhookSubscription.objects.create(
        organization_id=organization["id"], url="https://example.com/h", event_types=["*"],
        secret="whsec_x", created_at=now, updated_at=now, consecutive_failures=6,
        last_error="Timed out: no complete answer within 10 s.", last_error_at=now,
        suspended_until=now + dt.timedelta(minutes=5),
    )  # fmt: skip
    client = staff_client("outbox.view_webhooksubscription", "outbox.change_webhooksubscription")
    listed = client.get("/admin/outbox/webhooksubscription/").content.decode()
    assert "Consecutive failures" in listed and ">6<" in listed
    page = client.get(f"/admin/outbox/webhooksubscription/{subscription.pk}/change/")
    text = page.content.decode()
    assert "Timed out: no complete answer within 10 s." in text and "Suspended until" in text
    assert 'name="last_error"' not in text  # shown, not editable


def test_the_admin_refuses_a_private_destination_and_a_full_organization(organization, settings):
    """What the API refuses with 0120 and 0121 is a form error here, not a server error."""
    client = staff_client("outbox.add_webhooksubscription")
    add = "/admin/outbox/webhooksubscription/add/"
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = False
    refused = client.post(add, _form(organization["id"], "http://127.0.0.1:8000/hook"))
    assert refused.status_code == 200 and "0120" in refused.content.decode()
    assert "non-public address (127.0.0.1)" in refused.content.decode()
    settings.WEBHOOK_MAX_SUBSCRIPTIONS = 1
    assert client.post(add, _form(organization["id"])).status_code == 302
    full = client.post(add, _form(organization["id"]))
    assert full.status_code == 200 and "0121" in full.content.decode()
    assert WebhookSubscription.objects.count() == 1


@pytest.mark.django_db(transaction=True)  # the request runs outside any transaction, as served
@pytest.mark.usefixtures("fast_worker")
def test_staff_send_a_signed_test_event_and_see_the_answer(organization, unused_port):
    client = staff_client(
        "outbox.add_webhooksubscription",
        "outbox.view_webhooksubscription",
        "outbox.change_webhooksubscription",
    )
    with Receiver() as receiver:
        created = client.post(
            "/admin/outbox/webhooksubscription/add/", _form(organization["id"], receiver.url)
        )
        assert created.status_code == 302
        good = WebhookSubscription.objects.get()
        response = run_action(client, "outbox/webhooksubscription", "send_test", good.pk)
    shown = messages_of(response)
    assert any(receiver.url in m and "answered 200" in m for m in shown), shown
    (request,) = receiver.requests
    event = request["event"]
    assert event["type"] == "webhook.test" and event["data"] == {"subscriptionId": str(good.pk)}
    # shaped as every event is, with a delivery id as every delivery has
    assert set(event) == {"id", "type", "organizationId", "ledgerId", "resourceId", "createdAt",
                          "actor", "requestId", "clientAddress", "reason", "data"}  # fmt: skip
    assert event["actor"]["kind"] == "staff" and event["resourceId"] == str(good.pk)
    assert uuid.UUID(request["headers"]["Ledger-Delivery-Id"])
    assert verify(good.secret, request["headers"]["Ledger-Signature"], request["body"])
    # nothing stored: no event, no delivery, the subscription's health untouched
    assert not Event.objects.filter(type="webhook.test").exists()
    assert not Delivery.objects.exists()
    good.refresh_from_db()
    assert (good.consecutive_failures, good.last_error) == (0, "")
    # a receiver that is not there: the message says so
    WebhookSubscription.objects.filter(pk=good.pk).update(url=f"http://127.0.0.1:{unused_port}/h")
    failed = messages_of(run_action(client, "outbox/webhooksubscription", "send_test", good.pk))
    assert any("ConnectionRefusedError" in m for m in failed), failed


def test_a_test_send_never_waits_inside_a_transaction(organization):
    client = staff_client("outbox.add_webhooksubscription", "outbox.view_webhooksubscription")
    client.post("/admin/outbox/webhooksubscription/add/", _form(organization["id"]))
    subscription = WebhookSubscription.objects.get()
    with transaction.atomic(), pytest.raises(RuntimeError, match="not inside a transaction"):
        webhooks.send_test(subscription)


def test_the_subscription_form_offers_organizations_and_ledgers_to_choose(book, api):
    ledger = Ledger.objects.get()
    client = staff_client("outbox.add_webhooksubscription", "outbox.view_webhooksubscription")
    form = client.get("/admin/outbox/webhooksubscription/add/").context["adminform"].form
    assert str(ledger.organization_id) in dict(form.fields["organization_id"].choices)
    assert str(ledger.pk) in dict(form.fields["ledger_id"].choices)
    other = api.post("/v1/organizations", {"legalName": "Other", "legalDocument": "9"}).json()
    body = {**_form(other["id"]), "ledger_id": str(ledger.pk)}
    mixed = client.post("/admin/outbox/webhooksubscription/add/", body)
    assert "not one of the organization" in mixed.content.decode()
    assert not WebhookSubscription.objects.exists()
    body = {**_form(str(ledger.organization_id)), "ledger_id": str(ledger.pk)}
    assert client.post("/admin/outbox/webhooksubscription/add/", body).status_code == 302
    assert WebhookSubscription.objects.get().ledger_id == ledger.pk
