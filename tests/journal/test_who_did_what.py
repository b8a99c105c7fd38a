"""Who did what: every write records its actor (token, staff user or command), its request id
(X-Request-Id, echoed in every answer) and, for API and admin writes, the client address."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

from django.core.management import call_command

from ledgerproject import actors
from organizations.models import ApiToken
from outbox.models import Event
from tests.admin.helpers import ledger_of
from tests.admin.test_posting_page import PAYMENT
from transactions.models import Transaction

ROOT = Path(__file__).resolve().parents[2]
PAY = {
    "transactionTypeCode": "PAYMENT_WITH_FEE",
    "variables": {"amount": 1, "fee": 0, "source": "@alice", "destination": "@bob"},
}


def _token_actor():
    token = ApiToken.objects.get(name="root")
    return {"kind": "token", "name": "root", "id": str(token.pk)}


def test_a_posting_answers_its_actor_and_request_id(book):
    book.fund("@alice", 5_000)
    answer = book.post(PAY, HTTP_X_REQUEST_ID="order-42/attempt:1")
    assert answer.status_code == 201
    assert answer["X-Request-Id"] == "order-42/attempt:1"
    body = answer.json()
    assert body["actor"] == _token_actor()
    assert body["requestId"] == "order-42/attempt:1"
    assert book.api.get(f"{book.url}/transactions/{body['id']}").json()["actor"] == body["actor"]
    (event,) = book.api.get(f"{book.url}/events", {"type": "transaction.posted"}).json()[-1:]
    assert event["actor"] == _token_actor()
    assert event["requestId"] == "order-42/attempt:1"
    assert event["clientAddress"] == "127.0.0.1"


def test_a_request_without_an_id_or_with_a_bad_one_gets_one_made(book):
    book.fund("@alice", 5_000)
    for sent in ({}, {"HTTP_X_REQUEST_ID": "x" * 129}, {"HTTP_X_REQUEST_ID": "a b<script>"}):
        answer = book.post(PAY, **sent)
        made = answer["X-Request-Id"]
        assert re.fullmatch(r"[0-9a-f]{32}", made), made
        assert answer.json()["requestId"] == made


def test_every_answer_carries_its_request_id(api, anon, ledger_url):
    for response in (
        api.get(f"{ledger_url}/accounts", HTTP_X_REQUEST_ID="r1"),
        api.get(f"{ledger_url}/transactions/nope", HTTP_X_REQUEST_ID="r1"),
        anon.get(f"{ledger_url}/accounts", HTTP_X_REQUEST_ID="r1"),
        api.post(f"{ledger_url}/accounts", {"alias": 7}, HTTP_X_REQUEST_ID="r1"),
    ):
        assert response["X-Request-Id"] == "r1", response.status_code


def test_a_change_of_any_resource_records_who_made_it(api, ledger_url):
    api.post(f"{ledger_url}/instruments", {"name": "Real", "type": "currency", "code": "BRL"})
    created = api.post(f"{ledger_url}/accounts", {"alias": "@a", "assetCode": "BRL", "name": "a"})
    event = Event.objects.get(type="account.created", resource_id=created.json()["id"])
    assert (event.actor_kind, event.actor_name) == ("token", "root")
    assert event.client_address == "127.0.0.1" and len(event.request_id) == 32


def test_an_admin_posting_records_the_staff_user(admin_client, admin_user, book):
    book.fund("@alice", 100_000)
    url = f"/admin/organizations/ledger/{ledger_of(book).pk}/post/"
    response = admin_client.post(
        url, {**PAYMENT, "_post": "1", "reason": "Desk request"}, HTTP_X_REQUEST_ID="desk-1"
    )
    assert response.status_code == 302 and response["X-Request-Id"] == "desk-1"
    tx = Transaction.objects.get(type="PAYMENT_WITH_FEE")
    assert (tx.actor_kind, tx.actor_name, tx.actor_id) == (
        "staff",
        admin_user.username,
        str(admin_user.pk),
    )
    assert tx.request_id == "desk-1"
    event = Event.objects.get(resource_id=tx.pk)
    assert (event.actor_kind, event.client_address) == ("staff", "127.0.0.1")


def test_a_command_records_itself_and_its_os_user(book, monkeypatch):
    book.fund("@alice", 5_000)
    ledger = ledger_of(book)
    monkeypatch.setattr(actors, "_process", actors.Work())
    actors.as_command(["manage.py", "post_transaction"])
    call_command(
        "post_transaction", "--organization", str(ledger.organization_id), "--ledger",
        str(ledger.pk), "--template", "PAYMENT_WITH_FEE", "--var", "amount=1", "--var", "fee=0",
        "--var", "source=@alice", "--var", "destination=@bob", stdout=io.StringIO(),
    )  # fmt: skip
    tx = Transaction.objects.get(type="PAYMENT_WITH_FEE")
    assert (tx.actor_kind, tx.actor_name) == ("command", "post_transaction")
    assert tx.actor_id == actors.current().actor.id and tx.actor_id
    assert Event.objects.get(resource_id=tx.pk).client_address is None


def test_manage_py_acts_as_the_command():
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c",
         "from ledgerproject import actors; print(actors.current().actor)"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "LEDGER_DEV_DEFAULTS": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Actor(kind='command', name='shell', id=" in done.stdout


def test_the_ledgers_audit_trail_filters_by_actor_and_exports_csv(admin_client, book):
    book.fund("@alice", 5_000)
    ledger = ledger_of(book)
    dashboard = admin_client.get(f"/admin/organizations/ledger/{ledger.pk}/dashboard/")
    link = f"/admin/outbox/event/?ledger_id={ledger.pk}"
    assert link in dashboard.content.decode()
    page = admin_client.get(link + "&actor_kind__exact=token").content.decode()
    assert "transaction.posted" in page and "root" in page
    assert "account.created" in page
    export = admin_client.get(f"/admin/outbox/event/export.csv?ledger_id={ledger.pk}")
    rows = b"".join(export.streaming_content).decode().splitlines()
    assert rows[0].startswith("created_at,type,actor_kind,actor_name,actor_id,request_id")
    assert any(",transaction.posted,token,root," in row for row in rows[1:])
    by_staff = admin_client.get(
        f"/admin/outbox/event/export.csv?ledger_id={ledger.pk}&actor_kind__exact=staff"
    )
    assert b"".join(by_staff.streaming_content).decode().splitlines()[1:] == []


def test_a_client_address_that_is_not_an_ip_address_is_recorded_as_none(api, ledger_url):
    api.post(f"{ledger_url}/instruments", {"name": "Real", "type": "currency", "code": "BRL"})
    created = api.post(
        f"{ledger_url}/accounts",
        {"alias": "@a", "assetCode": "BRL", "name": "a"},
        REMOTE_ADDR="unix:/run/gunicorn.sock",
    )
    assert created.status_code == 201
    assert Event.objects.get(resource_id=created.json()["id"]).client_address is None


def test_an_ipv6_address_with_a_zone_is_recorded_without_it(api, ledger_url):
    api.post(f"{ledger_url}/instruments", {"name": "Real", "type": "currency", "code": "BRL"})
    created = api.post(
        f"{ledger_url}/accounts",
        {"alias": "@a", "assetCode": "BRL", "name": "a"},
        REMOTE_ADDR="fe80::1%eth0",
    )
    assert created.status_code == 201
    assert Event.objects.get(resource_id=created.json()["id"]).client_address == "fe80::1"


def test_outside_a_request_acting_as_someone_changes_nothing(monkeypatch):
    monkeypatch.setattr(actors, "_process", actors.Work())
    actors.act_as(actors.Actor("token", "stray", "x"))
    assert actors.current().actor == actors.SYSTEM


def test_a_redirect_carries_its_request_id_too(client):
    response = client.get("/admin/", HTTP_X_REQUEST_ID="r2")
    assert response.status_code == 302 and response["X-Request-Id"] == "r2"


def test_a_reason_stays_with_the_work_that_gave_it():
    """Outside a request the work is the process's, shared by its threads: a reason given in
    one thread is not another's."""
    seen = []
    inside, done = threading.Event(), threading.Event()

    def other() -> None:
        inside.wait(5)
        seen.append(actors.current().reason)
        done.set()

    thread = threading.Thread(target=other)
    thread.start()
    with actors.reason("Month end"):
        assert actors.current().reason == "Month end"
        inside.set()
        done.wait(5)
    thread.join(5)
    assert seen == [None] and actors.current().reason is None
