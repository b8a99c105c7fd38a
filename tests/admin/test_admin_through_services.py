"""The admin writes through the same services as the API, so it refuses exactly what the API
refuses, with the same code and message on the form, and writes nothing then.

Before: renaming a ledger to a name in use answered 500 (IntegrityError) where the API answers
409 0002; staff could store nested metadata (the API: 400 0067) and edit an ``@external/...``
account (the API: 422 0074)."""

from __future__ import annotations

import datetime as dt
import json

from django.utils import timezone

from organizations.models import Account, ApiToken, Ledger, Organization
from outbox.models import Event
from tests.admin.helpers import change_form, ledger_of, save_confirmed, staff_client
from tests.conftest import make_token


def _change(client, model: str, obj, **changes):
    """Save the admin change form of ``obj`` with its current values and ``changes``, confirmed
    when the change asks for it."""
    url, data, _ = change_form(client, model, obj)
    data.update(changes)
    return save_confirmed(client, url, data)


def _errors(response) -> str:
    assert response.status_code == 200, "the form was accepted"
    form = response.context["adminform"].form
    return " ".join(str(e) for errors in form.errors.values() for e in errors)


def test_a_duplicate_ledger_name_is_refused_on_the_form(book, admin_client, api):
    ledger = ledger_of(book)
    other = api.post(f"/v1/organizations/{ledger.organization_id}/ledgers", {"name": "Other"})
    assert other.status_code == 201
    response = _change(admin_client, "organizations/ledger", ledger, name="Other")
    assert "0002" in _errors(response)
    assert "already exists" in _errors(response)
    ledger.refresh_from_db()
    assert ledger.name == "Main"


def test_nested_metadata_is_refused_on_the_form(book, admin_client):
    ledger = ledger_of(book)
    response = _change(admin_client, "organizations/ledger", ledger,
                       metadata=json.dumps({"a": {"b": [1]}}))  # fmt: skip
    assert "0067" in _errors(response)
    ledger.refresh_from_db()
    assert ledger.metadata == {}
    organization = Organization.objects.get(pk=ledger.organization_id)
    response = _change(admin_client, "organizations/organization", organization,
                       metadata=json.dumps({f"k{i}": i for i in range(51)}))  # fmt: skip
    assert "0047" in _errors(response)


def test_an_external_account_cannot_be_edited(book, admin_client):
    external = Account.objects.get(alias="@external/BRL")
    response = _change(admin_client, "organizations/account", external, name="Mine now")
    assert "0074" in _errors(response)
    external.refresh_from_db()
    assert external.name == "External BRL"


def test_a_valid_change_is_written_by_the_service(book, admin_client):
    ledger = ledger_of(book)
    response = _change(admin_client, "organizations/ledger", ledger, name="Renamed",
                       metadata=json.dumps({"team": "ops"}))  # fmt: skip
    assert response.status_code == 302
    ledger.refresh_from_db()
    assert (ledger.name, ledger.metadata) == ("Renamed", {"team": "ops"})
    assert book.api.get(book.url).json()["name"] == "Renamed"


def test_a_deleted_ledger_takes_no_change_from_the_admin(book, admin_client):
    ledger = ledger_of(book)
    assert book.api.delete(book.url).status_code == 204
    response = _change(admin_client, "organizations/ledger", ledger, name="Back")
    assert "0008" in _errors(response)
    assert Ledger.objects.get(pk=ledger.pk).name == "Main"


def test_a_token_is_read_only_once_created(db):
    make_token("fixed")
    token = ApiToken.objects.get(name="fixed")
    client = staff_client("organizations.view_apitoken", "organizations.change_apitoken")
    response = client.post(f"/admin/organizations/apitoken/{token.pk}/change/",
                           {"name": "renamed", "read_only": "on"})  # fmt: skip
    assert response.status_code in (200, 302)
    token.refresh_from_db()
    assert (token.name, token.read_only) == ("fixed", False)


def test_the_overdraft_limit_is_set_through_the_service_and_refused_like_the_api(
    book, admin_client
):
    account = Account.objects.get(alias="@bob")
    response = _change(admin_client, "organizations/account", account, overdraft_limit="2.50",
                       reason="Agreed with the customer")  # fmt: skip
    assert response.status_code == 302, _errors(response)
    account.balance.refresh_from_db()
    assert (account.balance.overdraft_limit, account.balance.scale) == (250, 2)  # 2.50
    pay = {"amount": 200, "fee": 0, "source": "@bob", "destination": "@alice"}
    posted = book.post({"transactionTypeCode": "PAYMENT_WITH_FEE", "variables": pay})
    assert posted.status_code == 201, posted.content
    response = _change(admin_client, "organizations/account", account, overdraft_limit="1",
                       reason="Lower it")  # fmt: skip
    assert "0008" in _errors(response) and "overdrawn by 2.00" in _errors(response)
    response = _change(admin_client, "organizations/account", account, overdraft_limit="-1",
                       reason="Lower it")  # fmt: skip
    assert "non-negative decimal" in _errors(response)
    account.balance.refresh_from_db()
    assert account.balance.overdraft_limit == 250


def test_a_change_that_stops_or_lets_money_move_asks_for_a_reason(book, admin_client):
    """An account's status, its sending and receiving, its overdraft limit: changed only with
    a reason, which the change's event keeps with the staff user. A change of its name needs
    none."""
    bob = Account.objects.get(alias="@bob")
    response = _change(admin_client, "organizations/account", bob, status_code="FROZEN")
    assert "Say why status code changes" in _errors(response)
    assert Account.objects.get(pk=bob.pk).status_code == "ACTIVE"
    response = _change(admin_client, "organizations/account", bob, allow_receiving="")
    assert "Say why allow receiving changes" in _errors(response)
    assert Account.objects.get(pk=bob.pk).allow_receiving
    frozen = _change(admin_client, "organizations/account", bob, status_code="FROZEN",
                     reason="Card reported stolen, ticket 7")  # fmt: skip
    assert frozen.status_code == 302, _errors(frozen)
    assert Account.objects.get(pk=bob.pk).status_code == "FROZEN"
    event = Event.objects.filter(type="account.updated").latest("seq")
    assert (event.reason, event.actor_kind) == ("Card reported stolen, ticket 7", "staff")
    assert event.data["status"]["code"] == "FROZEN"
    renamed = _change(admin_client, "organizations/account", bob, name="Robert")
    assert renamed.status_code == 302, _errors(renamed)
    assert Event.objects.filter(type="account.updated").latest("seq").reason is None


def test_closing_a_period_asks_for_a_reason(book, admin_client):
    ledger = ledger_of(book)
    through = timezone.now().date() - dt.timedelta(days=2)  # a day that is over
    response = _change(admin_client, "organizations/ledger", ledger,
                       closed_through=through.isoformat())  # fmt: skip
    assert "Say why closed through changes" in _errors(response)
    assert Ledger.objects.get(pk=ledger.pk).closed_through is None
    closed = _change(admin_client, "organizations/ledger", ledger,
                     closed_through=through.isoformat(), reason="Month end")  # fmt: skip
    assert closed.status_code == 302, _errors(closed)
    assert Event.objects.filter(type="ledger.updated").latest("seq").reason == "Month end"


def test_the_pages_whose_changes_need_a_reason_show_its_field(book, admin_client):
    ledger = ledger_of(book)
    bob = Account.objects.get(alias="@bob")
    for model, obj in (("organizations/ledger", ledger), ("organizations/account", bob)):
        html = admin_client.get(f"/admin/{model}/{obj.pk}/change/").content.decode()
        assert 'name="reason"' in html, model
    organization = Organization.objects.get(pk=ledger.organization_id)
    html = admin_client.get(f"/admin/organizations/organization/{organization.pk}/change/")
    assert 'name="reason"' not in html.content.decode()


def test_a_change_that_stops_money_shows_what_it_will_do_and_waits_for_a_second_save(
    book, admin_client
):
    bob = Account.objects.get(alias="@bob")
    url, data, _ = change_form(admin_client, "organizations/account", bob)
    change = {**data, "status_code": "FROZEN", "overdraft_limit": "2.50", "reason": "Fraud check"}
    first = admin_client.post(url, change)
    page = first.content.decode()
    assert first.status_code == 200 and "save again to confirm it" in page
    assert "status: ACTIVE → FROZEN: the account neither sends nor receives" in page
    assert "the available balance may go down to minus 2.50 BRL" in page
    assert Account.objects.get(pk=bob.pk).status_code == "ACTIVE"  # nothing moved yet
    digest = first.context["adminform"].form.data["confirm"]
    # confirmed for another change (a different limit) is not confirmed for this one
    other = admin_client.post(url, {**change, "overdraft_limit": "9", "confirm": digest})
    assert "save again to confirm it" in other.content.decode()
    assert Account.objects.get(pk=bob.pk).status_code == "ACTIVE"
    done = admin_client.post(url, {**change, "confirm": digest})
    assert done.status_code == 302
    assert Account.objects.get(pk=bob.pk).status_code == "FROZEN"


def test_closing_and_reopening_a_period_say_what_they_do(book, admin_client):
    ledger = ledger_of(book)
    through = timezone.now().date() - dt.timedelta(days=2)
    url, data, _ = change_form(admin_client, "organizations/ledger", ledger)
    closing = {**data, "closed_through": through.isoformat(), "reason": "Month end"}
    page = admin_client.post(url, closing).content.decode()
    assert f"closes the books through {through} (UTC)" in page and "(0124)" in page
    assert save_confirmed(admin_client, url, closing).status_code == 302
    url, data, _ = change_form(admin_client, "organizations/ledger", ledger)
    reopening = {**data, "closed_through": "", "reason": "Late invoice"}
    page = admin_client.post(url, reopening).content.decode()
    assert f"reopens the days of the ledger&#x27;s whole past (closed through {through}" in page
    assert Ledger.objects.get(pk=ledger.pk).closed_through == through
