"""The back office a clerk uses every day: creating organizations, ledgers, instruments,
portfolios and accounts through the services; one money format; full ids; searching
transactions by alias and metadata; streamed CSV exports; titles and the index's dashboards."""

from __future__ import annotations

import csv
import io
import re

import pytest

from instruments.models import Rate
from organizations.models import Account, Balance, Ledger, Organization, Portfolio, Product
from tests.admin.helpers import ledger_of, staff_client
from transactions.models import Operation, Transaction


def _add(client, model: str, data: dict, **query):
    return client.post(f"/admin/{model}/add/", data, query_params=query or None)


def test_it_creates_the_hierarchy_through_the_services(admin_client, db):
    response = _add(
        admin_client, "organizations/organization", {"legal_name": "Acme", "legal_document": "42"}
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    org = Organization.objects.get(legal_name="Acme")
    assert org.path == f"/{org.pk.hex}/" and org.status_code == "ACTIVE"
    _add(admin_client, "organizations/ledger", {"organization": org.pk, "name": "Main"})
    ledger = Ledger.objects.get(organization=org, name="Main")
    response = _add(
        admin_client,
        "instruments/instrument",
        {"ledger": ledger.pk, "name": "Real", "type": "currency", "code": "BRL"},
    )
    assert response.status_code == 302
    assert Account.objects.filter(ledger=ledger, alias="@external/BRL").exists()
    _add(admin_client, "organizations/portfolio", {"ledger": ledger.pk, "name": "Retail"})
    portfolio = Portfolio.objects.get(ledger=ledger, name="Retail")
    response = _add(
        admin_client,
        "organizations/account",
        {
            "ledger": ledger.pk,
            "name": "Carol",
            "alias": "@carol",
            "asset_code": "BRL",
            "portfolio": portfolio.pk,
            "allow_sending": "on",
            "allow_receiving": "on",
        },
    )
    assert response.status_code == 302
    carol = Account.objects.get(ledger=ledger, alias="@carol")
    assert carol.organization_id == org.pk and carol.portfolio_id == portfolio.pk
    assert carol.type == "deposit" and carol.allow_sending and carol.allow_receiving
    assert Balance.objects.filter(account=carol).exists()


def test_products_and_rates_are_created_in_the_admin_as_the_api_creates_them(admin_client, book):
    ledger = ledger_of(book)
    response = _add(admin_client, "organizations/product", {"ledger": ledger.pk, "name": "Gold"})
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Product.objects.get(ledger=ledger, name="Gold").status_code == "ACTIVE"
    again = _add(admin_client, "organizations/product", {"ledger": ledger.pk, "name": "Gold"})
    assert again.status_code == 200 and "already exists" in again.content.decode()
    rate = {"ledger": ledger.pk, "base_code": "USD", "counter_code": "BRL", "amount": "525",
            "scale": "2", "source": "desk"}  # fmt: skip
    refused = _add(admin_client, "instruments/rate", rate)
    assert "0034: No active instrument in this ledger with code USD" in refused.content.decode()
    dollar = {"ledger": ledger.pk, "name": "Dollar", "type": "currency", "code": "USD"}
    assert _add(admin_client, "instruments/instrument", dollar).status_code == 302
    response = _add(admin_client, "instruments/rate", rate)
    assert response.status_code == 302, response.content.decode()[:2000]
    created = Rate.objects.get(ledger=ledger, base_code="USD")
    assert (created.amount, created.scale, created.source) == (525, 2, "desk")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"alias": "@bob"}, "0020: "),
        ({"alias": "bob"}, "0047: The alias &#x27;bob&#x27; is not valid"),
        ({"alias": "@external/BRL"}, "0074: "),
        ({"asset_code": "EUR"}, "0034: "),
    ],
)
def test_the_add_form_refuses_what_the_api_refuses(admin_client, book, change, message):
    ledger = ledger_of(book)
    before = Account.objects.count()
    data = {"ledger": ledger.pk, "name": "X", "alias": "@x", "asset_code": "BRL", **change}
    response = _add(admin_client, "organizations/account", data)
    assert response.status_code == 200
    assert message in response.content.decode()
    assert Account.objects.count() == before


def test_an_add_form_from_a_narrowed_list_starts_with_its_ledger(admin_client, book):
    ledger = ledger_of(book)
    for page in ("organizations/account", "templates_dsl/transactiontemplate",
                 "instruments/rate", "transactions/approvalrule"):  # fmt: skip
        response = admin_client.get(
            f"/admin/{page}/add/", {"_changelist_filters": f"ledger={ledger.pk}"}
        )
        assert f'value="{ledger.pk}"' in response.content.decode(), page


def test_adding_needs_the_add_permission(book):
    clerk = staff_client("organizations.view_account")
    assert clerk.get("/admin/organizations/account/add/").status_code == 403
    assert _add(clerk, "organizations/account", {"name": "X"}).status_code == 403


def test_amounts_are_decimals_with_the_asset_code(admin_client, book):
    book.fund("@alice", 94_800)
    html = admin_client.get("/admin/organizations/account/", {"q": "@alice"}).content.decode()
    assert "948.00 BRL" in html and "(scale " not in html
    balances = admin_client.get("/admin/organizations/balance/").content.decode()
    assert "948.00 BRL" in balances


def test_transactions_show_full_ids_and_readable_titles(admin_client, book):
    funded = book.fund("@alice", 10_000)
    tx = Transaction.objects.get(pk=funded["id"])
    html = admin_client.get("/admin/transactions/transaction/").content.decode()
    assert f'<code class="ledger-id" style="user-select: all">{tx.pk}</code>' in html
    assert f"{str(tx.pk)[:8]}…" not in html
    page = admin_client.get(f"/admin/transactions/transaction/{tx.pk}/change/").content.decode()
    assert "Transaction object" not in page and "Operation object" not in page
    assert f"FUND {tx.pk}" in page
    op = Operation.objects.filter(transaction=tx).first()
    assert str(op) == f"{op.type} {op.account_alias} ({op.pk})"


def test_transactions_are_found_by_account_alias_and_metadata(admin_client, book):
    book.fund("@alice", 10_000)
    paid = book.pay(2500, 100, metadata={"order": "42"}).json()
    book.fund("@bob", 5)
    url = "/admin/transactions/transaction/"
    by_alias = admin_client.get(url, {"q": "@alice"}).content.decode()
    assert paid["id"] in by_alias and by_alias.count('class="ledger-id"') == 2
    by_fee = admin_client.get(url, {"q": "@fees/platform"}).content.decode()
    assert by_fee.count('class="ledger-id"') == 1
    by_metadata = admin_client.get(url, {"q": "order=42"}).content.decode()
    assert paid["id"] in by_metadata and by_metadata.count('class="ledger-id"') == 1
    nothing = admin_client.get(url, {"q": "order=43"}).content.decode()
    assert 'class="ledger-id"' not in nothing


def _csv(response) -> list[dict[str, str]]:
    assert response.status_code == 200 and response.streaming
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"].startswith("attachment; filename=")
    text = b"".join(response.streaming_content).decode()
    return list(csv.DictReader(io.StringIO(text)))


def test_it_exports_transactions_a_statement_and_balances_as_csv(admin_client, book):
    ledger = ledger_of(book)
    book.fund("@alice", 10_000)
    paid = book.pay(2500, 100, metadata={"note": "=1+1"}).json()
    rows = _csv(admin_client.get("/admin/transactions/transaction/export.csv", {"q": "@bob"}))
    assert [row["id"] for row in rows] == [paid["id"]]
    assert rows[0]["amount"] == "26.00" and rows[0]["asset_code"] == "BRL"
    assert rows[0]["source"] == "@alice" and rows[0]["destination"] == "@fees/platform @bob"
    assert rows[0]["metadata"].startswith("{") and "=1+1" in rows[0]["metadata"]
    alice = Account.objects.get(ledger=ledger, alias="@alice")
    statement = _csv(
        admin_client.get("/admin/transactions/operation/export.csv", {"account": alice.pk})
    )
    assert [(r["type"], r["amount"], r["available_after"]) for r in statement] == [
        ("DEBIT", "26.00", "74.00"),
        ("CREDIT", "100.00", "100.00"),
    ]
    balances = _csv(admin_client.get("/admin/organizations/balance/export.csv"))
    by_alias = {row["account_alias"]: row for row in balances}
    assert by_alias["@bob"]["available"] == "25.00"
    assert by_alias["@external/BRL"]["available"] == "-100.00"  # a number, not escaped
    listed = admin_client.get("/admin/transactions/transaction/", {"q": "@bob"}).content.decode()
    assert 'href="/admin/transactions/transaction/export.csv?q=%40bob"' in listed


def test_a_cell_a_spreadsheet_would_run_is_escaped(admin_client, book):
    book.fund("@alice", 10_000)
    book.pay(2500, 100, description="=HYPERLINK(1)")
    rows = _csv(admin_client.get("/admin/transactions/transaction/export.csv"))
    assert "'=HYPERLINK(1)" in [row["description"] for row in rows]


def test_exporting_needs_the_view_permission(book):
    clerk = staff_client("organizations.view_ledger")
    assert clerk.get("/admin/transactions/transaction/export.csv").status_code == 403


def test_the_index_has_readable_titles_and_each_ledgers_dashboard(admin_client, book):
    ledger = ledger_of(book)
    html = admin_client.get("/admin/").content.decode()
    assert "Ledger back office" in html and "Django administration" not in html
    # sections by task (test_navigation.py), never an app's module name
    assert re.search(r'class="section"[^>]*>Ledgers</a>', html) and "Templates_Dsl" not in html
    assert f'href="/admin/organizations/ledger/{ledger.pk}/dashboard/"' in html
    clerk = staff_client("organizations.view_ledger")  # no view_transaction: no dashboards
    assert "Ledger dashboards" not in clerk.get("/admin/").content.decode()


def test_a_statement_writes_every_money_figure_of_a_row_with_the_same_digits(admin_client, book):
    """The first posting of an account finds its balance at 0 and scale 0; its row still reads
    0.00 before and 100.00 after, not 0 and 100.00 (one format in a column)."""
    ledger = ledger_of(book)
    book.fund("@alice", 10_000)
    alice = Account.objects.get(ledger=ledger, alias="@alice")
    (row,) = _csv(
        admin_client.get("/admin/transactions/operation/export.csv", {"account": alice.pk})
    )
    figures = [row[k] for k in ("amount", "available_before", "on_hold_before",
                                "available_after", "on_hold_after")]  # fmt: skip
    assert figures == ["100.00", "0.00", "0.00", "100.00", "0.00"]


def test_choices_stand_where_a_fixed_list_gives_them(admin_client, book):
    form = admin_client.get("/admin/instruments/instrument/add/").context["adminform"].form
    assert [value for value, _ in form.fields["type"].choices] == [
        "crypto", "currency", "commodity", "others"
    ]  # fmt: skip
    ledger = ledger_of(book)
    wrong = _add(admin_client, "instruments/instrument",
                 {"ledger": ledger.pk, "name": "X", "type": "money", "code": "XAU"})  # fmt: skip
    assert wrong.status_code == 200 and "Select a valid choice" in wrong.content.decode()
