"""Organization → ledgers → accounts, templates, transactions: links, and lists narrowed to a
parent through ``?organization=`` and ``?ledger=``."""

from __future__ import annotations

from tests.admin.helpers import ledger_of
from tests.conftest import Api


def _second_ledger(api: Api) -> dict:
    org = api.post("/v1/organizations", {"legalName": "Other", "legalDocument": "9"}).json()
    return api.post(f"/v1/organizations/{org['id']}/ledgers", {"name": "Elsewhere"}).json()


def test_an_organization_links_to_its_ledgers(admin_client, book, api):
    ledger = ledger_of(book)
    other = _second_ledger(api)
    org_page = admin_client.get(
        f"/admin/organizations/organization/{ledger.organization_id}/change/"
    ).content.decode()
    assert f"/admin/organizations/ledger/{ledger.pk}/change/" in org_page
    narrowed = f"/admin/organizations/ledger/?organization={ledger.organization_id}"
    assert narrowed in org_page
    assert narrowed in admin_client.get("/admin/organizations/organization/").content.decode()
    listing = admin_client.get(narrowed).content.decode()
    assert "Main" in listing and other["name"] not in listing


def test_a_ledger_links_to_its_contents_and_pages(admin_client, book, api):
    ledger = ledger_of(book)
    _second_ledger(api)
    page = admin_client.get(f"/admin/organizations/ledger/{ledger.pk}/change/").content.decode()
    for target in (
        f"/admin/organizations/account/?ledger={ledger.pk}",
        f"/admin/templates_dsl/transactiontemplate/?ledger={ledger.pk}",
        f"/admin/transactions/transaction/?ledger={ledger.pk}",
        f"/admin/organizations/ledger/{ledger.pk}/dashboard/",
        f"/admin/organizations/ledger/{ledger.pk}/post/",
    ):
        assert target in page, target
    accounts = admin_client.get(f"/admin/organizations/account/?ledger={ledger.pk}")
    assert "@alice" in accounts.content.decode() and "@external/BRL" in accounts.content.decode()
    templates = admin_client.get(f"/admin/templates_dsl/transactiontemplate/?ledger={ledger.pk}")
    assert "PAYMENT_WITH_FEE" in templates.content.decode()


def test_an_account_links_to_its_page_and_its_operations_list_narrows(admin_client, book):
    book.fund("@alice", 700)
    alice = book.accounts["@alice"]
    listing = admin_client.get("/admin/organizations/account/").content.decode()
    assert f"/admin/organizations/account/{alice['id']}/page/" in listing  # test_account_page
    statement = f"/admin/transactions/operation/?account={alice['id']}"
    html = admin_client.get(statement).content.decode()
    assert "@alice" in html and "7.00 BRL" in html and "@bob" not in html.split("result_list")[1]
