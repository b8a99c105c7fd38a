"""The back office's one search box (``ledgerproject.admin_search``): accounts, transactions,
ledgers and organizations, each found by its own list's search, among what the user may view."""

from __future__ import annotations

from organizations.models import Organization
from tests.admin.helpers import ledger_of, staff_client


def _sections(response) -> dict[str, list[str]]:
    assert response.status_code == 200
    return {s["title"]: [text for text, _ in s["rows"]] for s in response.context["sections"]}


def test_every_page_has_the_box_and_an_empty_query_explains_it(admin_client, book):
    assert 'id="global-search"' in admin_client.get("/admin/").content.decode()
    assert (
        'id="global-search"' in admin_client.get("/admin/organizations/account/").content.decode()
    )
    page = admin_client.get("/admin/search/")
    assert page.context["sections"] == [] and "an account's alias" in page.content.decode()


def test_an_alias_finds_the_account_and_its_transactions(admin_client, book):
    book.fund("@alice", 10_000)
    sent = book.pay(100, 1).json()
    found = _sections(admin_client.get("/admin/search/", {"q": "@alice"}))
    assert [row for row in found["Accounts"] if "@alice" in row]
    assert len(found["Transactions"]) == 2  # the funding and the payment
    by_id = _sections(admin_client.get("/admin/search/", {"q": sent["id"]}))
    assert by_id["Transactions"] == [f"PAYMENT_WITH_FEE {sent['id']}"]


def test_a_metadata_entry_and_names_find_their_rows(admin_client, book):
    book.fund("@alice", 10_000)
    book.pay(100, 1, metadata={"order": "42"})
    found = _sections(admin_client.get("/admin/search/", {"q": "order=42"}))
    assert len(found["Transactions"]) == 1
    ledger = ledger_of(book)
    by_name = _sections(admin_client.get("/admin/search/", {"q": ledger.name}))
    assert by_name["Ledgers"] == [str(ledger)]
    organization = Organization.objects.get(pk=ledger.organization_id)
    by_org = _sections(admin_client.get("/admin/search/", {"q": organization.legal_name}))
    assert str(organization) in by_org["Organizations"]


def test_a_user_searches_only_the_lists_they_may_view(book):
    book.fund("@alice", 10_000)
    client = staff_client("organizations.view_account")
    assert list(_sections(client.get("/admin/search/", {"q": "@alice"}))) == ["Accounts"]
    nobody = staff_client(username="nobody")
    page = nobody.get("/admin/search/", {"q": "@alice"})
    assert page.context["sections"] == [] and "no list here" in page.content.decode()


def test_odd_queries_are_answered_not_crashed(admin_client, book):
    for query in ("not-a-uuid", "%", "'; --", "x" * 5_000, "=", "@", "a=b=c"):
        response = admin_client.get("/admin/search/", {"q": query})
        assert response.status_code == 200, query
    long = admin_client.get("/admin/search/", {"q": "y" * 5_000})
    assert long.context["global_query"] == "y" * 200


def test_more_than_a_page_links_to_the_list_with_the_query(admin_client, book):
    for n in range(11):
        book.account(f"@many{n}")
    found = admin_client.get("/admin/search/", {"q": "@many"}).context["sections"][0]
    assert found["more"] and len(found["rows"]) == 10
    assert found["list"] == "/admin/organizations/account/?q=%40many"
