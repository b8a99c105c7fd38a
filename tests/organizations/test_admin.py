"""The staff admin: every model of the ledger's contents is browsable and searchable, and API
tokens are created through ``token_create`` with the raw token shown once."""

from __future__ import annotations

import pytest
from django.contrib.messages import get_messages

from organizations.models import ApiToken
from organizations.services import token_create
from tests.conftest import Api, assert_error
from tests.organizations.helpers import account, create

PAGES = [
    "organizations/organization",
    "organizations/ledger",
    "organizations/portfolio",
    "organizations/product",
    "organizations/account",
    "organizations/apitoken",
    "instruments/instrument",
    "instruments/rate",
]


@pytest.fixture
def contents(api, ledger_url, usd, eur):
    create(api, f"{ledger_url}/portfolios", {"name": "Retail"})
    create(api, f"{ledger_url}/products", {"name": "Gold"})
    create(
        api,
        f"{ledger_url}/asset-rates",
        {"baseAssetCode": "USD", "counterAssetCode": "EUR", "amount": 9, "scale": 1},
    )
    return account(api, ledger_url, alias="@alice")


@pytest.mark.parametrize("page", PAGES)
def test_it_lists_and_searches_every_model(admin_client, contents, page):
    response = admin_client.get(f"/admin/{page}/")
    assert response.status_code == 200
    params = {"q": "a"} if page.endswith("apitoken") else {"q": "a", "deleted": "no"}
    assert admin_client.get(f"/admin/{page}/", params).status_code == 200


def test_it_shows_an_account_with_its_balance(admin_client, contents):
    response = admin_client.get(f"/admin/organizations/account/{contents['id']}/change/")
    assert response.status_code == 200
    assert b"@alice" in response.content
    assert b">0 USD<" in response.content and b"(scale " not in response.content


def test_it_adds_through_the_services_but_never_hard_deletes(admin_client, contents):
    # Accounts and instruments are added through their create services (tested in
    # tests/admin/test_creation_and_exports.py); products and rates too.
    assert admin_client.get("/admin/organizations/account/add/").status_code == 200
    assert admin_client.get("/admin/instruments/instrument/add/").status_code == 200
    assert admin_client.get("/admin/organizations/product/add/").status_code == 200
    assert admin_client.get("/admin/instruments/rate/add/").status_code == 200
    delete = f"/admin/organizations/account/{contents['id']}/delete/"
    assert admin_client.get(delete).status_code == 403


def test_it_creates_a_token_and_shows_it_once(admin_client, organization):
    response = admin_client.post(
        "/admin/organizations/apitoken/add/",
        {
            "name": "ops",
            "organizations": [organization["id"]],
            "read_only": "on",
            "expires_in_days": "30",
        },
        follow=True,
    )
    assert response.status_code == 200
    token = ApiToken.objects.get(name="ops")
    assert token.read_only and token.expires_at is not None
    assert [str(o.pk) for o in token.organizations.all()] == [organization["id"]]
    shown = [str(m) for m in get_messages(response.wsgi_request) if "copy it now" in str(m)]
    assert len(shown) == 1
    raw = next(word for word in shown[0].split() if word.startswith("lgr_"))
    client = Api(raw)
    assert client.get(f"/v1/organizations/{organization['id']}").status_code == 200
    assert_error(
        client.post("/v1/organizations", {"legalName": "x", "legalDocument": "y"}), 403, "0043"
    )

    listing = admin_client.get("/admin/organizations/apitoken/").content.decode()
    change = admin_client.get(f"/admin/organizations/apitoken/{token.pk}/change/").content.decode()
    for page in (listing, change):
        assert token.prefix in page
        assert token.secret_hash not in page and raw not in page


def test_it_revokes_tokens_with_an_action(admin_client, db):
    token, raw = token_create(name="old")
    response = admin_client.post(
        "/admin/organizations/apitoken/",
        {"action": "revoke", "_selected_action": [token.pk]},
        follow=True,
    )
    assert response.status_code == 200
    token.refresh_from_db()
    assert token.revoked_at is not None
    assert_error(Api(raw).get("/v1/organizations"), 401, "0042")
