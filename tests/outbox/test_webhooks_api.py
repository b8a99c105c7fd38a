"""Webhook subscriptions through the API: create (the secret shown once), read, update, pause,
delete; the URL rule; tenancy; read-only tokens cannot write."""

from __future__ import annotations

import pytest

from outbox.models import WebhookSubscription
from tests.conftest import Api, assert_error, make_token

pytestmark = pytest.mark.django_db

HOOK = {"url": "https://example.com/hooks", "eventTypes": ["transaction.posted"]}


def _org_url(ledger_url: str) -> str:
    return ledger_url.split("/ledgers/")[0]


def test_it_creates_a_subscription_and_shows_the_secret_once(api, ledger_url):
    created = api.post(f"{ledger_url}/webhooks", {**HOOK, "description": "payments"})
    assert created.status_code == 201, created.content
    body = created.json()
    assert body["secret"].startswith("whsec_") and len(body["secret"]) > 40
    assert body["status"] == "ACTIVE" and body["eventTypes"] == ["transaction.posted"]
    assert body["ledgerId"] == ledger_url.rsplit("/", 1)[1]
    read = api.get(f"{ledger_url}/webhooks/{body['id']}").json()
    assert "secret" not in read
    assert read == {k: v for k, v in body.items() if k != "secret"}
    listed = api.get(f"{_org_url(ledger_url)}/webhooks").json()
    assert [h["id"] for h in listed] == [body["id"]]
    assert all("secret" not in h for h in listed)
    assert WebhookSubscription.objects.get().secret == body["secret"]


def test_it_pauses_updates_and_deletes(api, ledger_url):
    hook = api.post(f"{_org_url(ledger_url)}/webhooks", {**HOOK, "eventTypes": ["*"]}).json()
    url = f"{_org_url(ledger_url)}/webhooks/{hook['id']}"
    paused = api.patch(url, {"status": "PAUSED", "url": "http://example.org/x"})
    assert paused.status_code == 200, paused.content
    assert paused.json()["status"] == "PAUSED" and paused.json()["url"] == "http://example.org/x"
    assert_error(api.patch(url, {"secret": "mine"}), 400, "0006")
    assert_error(api.patch(url, {"colour": "red"}), 400, "0053")
    assert api.delete(url).status_code == 204
    assert api.get(url).json()["deletedAt"] is not None
    assert_error(api.delete(url), 400, "0013")


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com/x",
        "file:///etc/passwd",
        "gopher://example.com",
        "https://user:pw@example.com/",
        "https:///nohost",
        "http://example.com:99999/",
        "https://example.com/" + "a" * 2100,
        "https://ex\u008eample.com/",  # no host name: IDNA cannot encode it (was a 500)
    ],
)
def test_it_refuses_urls_it_will_not_call(api, ledger_url, url):
    response = api.post(f"{ledger_url}/webhooks", {**HOOK, "url": url})
    assert response.status_code == 400, response.content
    assert response.json()["code"] in {"0120", "0047"}


def test_it_refuses_unknown_event_types_and_missing_fields(api, ledger_url):
    assert_error(api.post(f"{ledger_url}/webhooks", {**HOOK, "eventTypes": ["x.y"]}), 400, "0047")
    assert_error(api.post(f"{ledger_url}/webhooks", {**HOOK, "eventTypes": []}), 400, "0047")
    assert_error(api.post(f"{ledger_url}/webhooks", {"url": HOOK["url"]}), 400, "0009")


def test_tenancy_and_read_only(api, ledger_url, read_only_api):
    hook = api.post(f"{ledger_url}/webhooks", HOOK).json()
    assert read_only_api.get(f"{ledger_url}/webhooks").status_code == 200
    assert_error(read_only_api.post(f"{ledger_url}/webhooks", HOOK), 403, "0043")
    other = api.post("/v1/organizations", {"legalName": "B", "legalDocument": "9"}).json()
    outsider = Api(make_token("outsider", organization_ids=[other["id"]]))
    assert_error(outsider.get(f"{ledger_url}/webhooks/{hook['id']}"), 404, "0007")
    assert_error(outsider.get(f"/v1/organizations/{other['id']}/webhooks/{hook['id']}"), 404,
                 "0007")  # fmt: skip
