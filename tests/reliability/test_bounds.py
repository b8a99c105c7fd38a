"""Bounds on what a client may store and read at once, and bad input that used to crash.

Before: metadata took any number of keys (100 portfolios of 60,000 keys made one page 84 MB and
~8 s); a tampered cursor, a date cursor on a statement, metadata PostgreSQL cannot store
(``"\\ud800"``, ``1e999``) and ``?deleted=`` on transaction lists answered 500."""

from __future__ import annotations

import base64
import json

import pytest

from ledgerproject import metadata
from ledgerproject.api import pagination
from organizations.models import Organization, Portfolio
from tests.conftest import assert_error


def test_metadata_takes_at_most_50_keys(book):
    url = f"{book.url}/portfolios"
    ok = book.api.post(url, {"name": "p", "metadata": {f"k{i}": i for i in range(50)}})
    assert ok.status_code == 201, ok.content
    body = assert_error(
        book.api.post(url, {"name": "p", "metadata": {f"k{i}": i for i in range(51)}}),
        400,
        "0047",
    )
    assert body["fields"] == {"metadata": "at most 50 keys"}
    assert Portfolio.objects.count() == 1


def test_metadata_takes_at_most_16_kib(book):
    big = {f"k{i}": "x" * 2000 for i in range(9)}
    body = assert_error(
        book.api.post(f"{book.url}/portfolios", {"name": "p", "metadata": big}), 400, "0047"
    )
    assert body["fields"] == {"metadata": f"at most {metadata.MAX_BYTES} bytes"}
    pay = {
        "transactionTypeCode": "FUND",
        "variables": {"amount": 1, "account": "@alice"},
        "metadata": big,
    }
    assert_error(book.post(pay), 400, "0047")


def test_a_page_stops_at_its_byte_budget_and_its_link_goes_on(book, monkeypatch):
    for i in range(7):
        book.api.post(f"{book.url}/portfolios", {"name": f"p{i}", "metadata": {"pad": "x" * 2000}})
    monkeypatch.setattr(pagination, "PAGE_MAX_BYTES", 6_000)
    seen, url, pages = [], f"{book.url}/portfolios?limit=100", 0
    while url:
        response = book.api.get(url)
        assert response.status_code == 200
        names = [p["name"] for p in response.json()]
        assert 1 <= len(names) <= 2
        seen += names
        pages += 1
        link = response.headers.get("Link")
        url = link[1 : link.index(">")] if link else None
    assert seen == [f"p{i}" for i in range(7)]
    assert pages == 4


def _cursor(value) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    "value",
    [
        [5, "00000000-0000-0000-0000-000000000000"],
        ["2026-01-01", "00000000-0000-0000-0000-000000000000"],
        ["0001-01-01T00:00:00+14:00", "00000000-0000-0000-0000-000000000000"],
        [True, "00000000-0000-0000-0000-000000000000"],
        ["2026-01-01T00:00:00+00:00", 5],
    ],
)
def test_a_tampered_cursor_is_400_on_every_list(book, value):
    cursor = _cursor(value)
    for path in ("portfolios", "accounts", "transactions", "instruments", "transaction-templates"):
        response = book.api.get(
            f"{book.url}/{path}", {"cursor": cursor}, HTTP_ACCEPT="application/json"
        )
        assert_error(response, 400, "0082")
    assert_error(book.api.get("/v1/organizations", {"cursor": cursor}), 400, "0082")


def test_a_date_cursor_on_a_statement_is_400(book):
    alice = book.accounts["@alice"]["id"]
    cursor = _cursor(["2026-01-01T00:00:00+00:00", "00000000-0000-0000-0000-000000000000"])
    url = f"{book.url}/accounts/{alice}/operations"
    assert_error(book.api.get(url, {"cursor": cursor}), 400, "0082")
    assert_error(book.api.get(url, {"cursor": _cursor([2**63, alice])}), 400, "0082")


@pytest.mark.parametrize(
    "raw",
    [
        '{"legalName": "x", "legalDocument": "1", "metadata": {"a": "\\ud800"}}',
        '{"legalName": "x", "legalDocument": "1", "metadata": {"\\udfff": 1}}',
        '{"legalName": "x", "legalDocument": "1", "metadata": {"a": 1e999}}',
        '{"legalName": "x", "legalDocument": "1", "metadata": {"a": -1e999}}',
        '{"legalName": "x", "legalDocument": "1", "status": {"code": "\\ud800"}}',
        '{"legalName": "\\ud800", "legalDocument": "1"}',
        '{"legalName": "x\\u0000", "legalDocument": "1"}',
        '{"legalName": "x", "legalDocument": "1", "metadata": {"a": "\\uDBFF"}}',
        '{"legalName": "x", "legalDocument": "1", "metadata": {"a": "\\ud83d\\u0041"}}',
        '{"legalName": "x", "legalDocument": "1", "metadata": {"a": NaN}}',
        '{"legalName": "x", "legalDocument": "1", "metadata": {"a": Infinity}}',
    ],
)
def test_values_the_database_cannot_store_are_400(api, raw):
    response = api.post("/v1/organizations", raw, content_type="application/json")
    assert_error(response, 400, "0047")
    assert not Organization.objects.exists()


@pytest.mark.parametrize(
    ("raw", "name"),
    [
        # a surrogate pair is one character, U+1F600
        ('{"legalName": "x\\ud83d\\ude00", "legalDocument": "1"}', "x\U0001f600"),
        # an escaped backslash before "u0000": text, not an escape (the parser's quick scan
        # flags it, the full walk then finds nothing wrong)
        ('{"legalName": "x\\\\u0000", "legalDocument": "1"}', "x\\u0000"),
        ('{"legalName": "x", "legalDocument": "1", "metadata": {"a": 1.5e300}}', "x"),
    ],
)
def test_values_that_only_look_unstorable_are_stored(api, raw, name):
    response = api.post("/v1/organizations", raw, content_type="application/json")
    assert response.status_code == 201, response.content
    assert response.json()["legalName"] == name


def test_values_the_database_cannot_store_are_400_in_postings_too(book):
    raw = (
        '{"transactionTypeCode": "FUND", "variables": {"amount": 1, "account": "@alice"}, '
        '"metadata": {"a": "\\ud800"}}'
    )
    assert_error(
        book.api.post(f"{book.url}/transactions", raw, content_type="application/json"), 400, "0047"
    )


@pytest.mark.parametrize("value", ["true", "false"])
def test_deleted_on_transaction_lists_is_400(book, value):
    for path in ("transactions", f"accounts/{book.accounts['@alice']['id']}/transactions"):
        assert_error(book.api.get(f"{book.url}/{path}", {"deleted": value}), 400, "0082")


@pytest.mark.parametrize("accept", ["text/plain", "application/json"])
def test_the_template_list_is_paged_like_every_list(book, accept):
    url, codes = f"{book.url}/transaction-templates?limit=2", []
    while url:
        response = book.api.get(url, HTTP_ACCEPT=accept)
        assert response.status_code == 200
        if accept == "application/json":
            codes += [t["code"] for t in response.json()]
        else:
            codes += [c.split(")")[0] for c in response.content.decode().split("(code ")[1:]]
        link = response.headers.get("Link")
        url = link[1 : link.index(">")] if link else None
    assert codes == ["FUND", "PAYMENT_WITH_FEE", "PAYMENT_HELD"]
