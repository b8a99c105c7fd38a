"""An account's status comes from a documented list, each code with its effect on postings
(``organizations.models.ACCOUNT_STATUSES``, docs/API.md "Account statuses"), enforced by the
posting's guard (422 0024). Any other code is 400 0047 through the API, a form error in the
admin (which offers the list as choices), and an IntegrityError for any other writer.

Before: the status was free text, so ``FROZEN`` (API) or ``frozen`` (admin) was stored and the
account still sent and received money; only BLOCKED, 002 and INACTIVE blocked it."""

from __future__ import annotations

import json

import pytest
from django.db import IntegrityError, transaction

from organizations.models import ACCOUNT_STATUSES, Account
from tests.admin.helpers import change_form, save_confirmed
from tests.conftest import Api, assert_error
from tests.transactions.conftest import Book, make_book

# What each status lets an account do: (sends, receives). Written out, not read from the code.
EFFECTS = {
    "ACTIVE": (True, True),
    "001": (True, True),
    "003": (False, True),
    "FROZEN": (False, False),
    "BLOCKED": (False, False),
    "002": (False, False),
    "INACTIVE": (False, False),
}


@pytest.fixture
def book(api: Api, ledger_url: str) -> Book:
    return make_book(api, ledger_url)


def _url(book: Book, alias: str) -> str:
    return f"{book.url}/accounts/{book.accounts[alias]['id']}"


def _set_status(book: Book, alias: str, code: str) -> None:
    response = book.api.patch(_url(book, alias), {"status": {"code": code}})
    assert response.status_code == 200, response.content
    assert response.json()["status"]["code"] == code


def test_the_list_is_the_documented_one():
    assert {code: (s.sends, s.receives) for code, s in ACCOUNT_STATUSES.items()} == EFFECTS


@pytest.mark.parametrize("code", list(EFFECTS))
def test_each_status_has_its_effect_on_postings(book, code):
    sends, receives = EFFECTS[code]
    book.fund("@bob", 1_000)
    _set_status(book, "@bob", code)
    fund = {"transactionTypeCode": "FUND", "variables": {"amount": 100, "account": "@bob"}}
    received = book.post(fund)
    sent = book.pay(100, 0, source="@bob", destination="@alice")
    for response, allowed in ((received, receives), (sent, sends)):
        if allowed:
            assert response.status_code == 201, (code, response.content)
        else:
            assert code in assert_error(response, 422, "0024")["description"]
    expected = 1_000 + (100 if receives else 0) - (100 if sends else 0)
    assert book.available("@bob") == expected


def test_a_frozen_account_neither_sends_nor_receives(book):
    book.fund("@alice", 500)
    _set_status(book, "@alice", "FROZEN")
    assert_error(book.pay(100, 1), 422, "0024")
    assert_error(book.pay(100, 1, source="@bob", destination="@alice"), 422, "0024")
    assert book.available("@alice") == 500


def test_the_flags_narrow_what_the_status_allows(book):
    book.fund("@bob", 100)
    book.api.patch(_url(book, "@bob"), {"allowReceiving": False})
    _set_status(book, "@bob", "003")
    fund = {"transactionTypeCode": "FUND", "variables": {"amount": 1, "account": "@bob"}}
    assert_error(book.post(fund), 422, "0024")


@pytest.mark.parametrize("code", ["frozen", "Frozen", "SUSPENDED", "active", "004", " ACTIVE"])
def test_an_unknown_status_is_refused_on_create_and_patch(book, code):
    body = assert_error(book.api.post(f"{book.url}/accounts", {
        "alias": "@carol", "assetCode": "BRL", "status": {"code": code}}), 400, "0047")  # fmt: skip
    assert "status.code" in body["fields"]
    assert not Account.objects.filter(alias="@carol").exists()
    body = assert_error(book.api.patch(_url(book, "@bob"), {"status": {"code": code}}), 400, "0047")
    assert "status.code" in body["fields"]
    assert Account.objects.get(alias="@bob").status_code == "ACTIVE"


def test_every_listed_status_is_accepted_on_create(book):
    for index, code in enumerate(EFFECTS):
        made = book.account(f"@made{index}", status={"code": code, "description": "why"})
        assert made["status"] == {"code": code, "description": "why"}


def test_the_schema_lists_the_account_statuses(anon, db):
    schema = json.loads(anon.get("/v1/openapi.json").content)
    components = schema["components"]["schemas"]
    request = components["AccountCreateInRequest"]["properties"]["status"]
    ref = request.get("$ref") or request["allOf"][0]["$ref"]
    code = components[ref.rsplit("/", 1)[1]]["properties"]["code"]
    enum = code.get("enum") or components[code["allOf"][0]["$ref"].rsplit("/", 1)[1]]["enum"]
    assert enum == list(EFFECTS)


def test_no_writer_can_store_another_status(book):
    with pytest.raises(IntegrityError), transaction.atomic():
        Account.objects.filter(alias="@bob").update(status_code="frozen")
    assert Account.objects.get(alias="@bob").status_code == "ACTIVE"


# The admin


def test_the_admin_offers_the_list_and_refuses_anything_else(book, admin_client):
    bob = Account.objects.get(alias="@bob")
    url, data, form = change_form(admin_client, "organizations/account", bob)
    assert [value for value, _ in form.fields["status_code"].choices] == list(EFFECTS)
    response = admin_client.post(url, {**data, "status_code": "frozen"})
    assert response.status_code == 200, "the form was accepted"
    assert "status_code" in response.context["adminform"].form.errors
    assert Account.objects.get(pk=bob.pk).status_code == "ACTIVE"
    response = save_confirmed(
        admin_client, url, {**data, "status_code": "FROZEN", "reason": "Fraud check"}
    )
    assert response.status_code == 302
    assert Account.objects.get(pk=bob.pk).status_code == "FROZEN"
    assert_error(book.pay(1, 0, source="@alice", destination="@bob"), 422, "0024")
