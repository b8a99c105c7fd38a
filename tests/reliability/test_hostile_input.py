"""Inputs the fuzzers found crashing the service (500), each now answered in the envelope and
run on both databases: NUL characters, which PostgreSQL stores in neither text nor jsonb (so
they crashed there only), JSON nested too deeply for Python's parser, and dates whose
conversion to UTC, or whose next day, leaves Python's calendar."""

from __future__ import annotations

import re

import pytest

from organizations.models import Organization
from templates_dsl.models import TransactionTemplate
from tests.conftest import assert_error
from tests.transactions.conftest import FUND
from transactions.models import IdempotencyKey, Transaction

PAY = {"transactionTypeCode": "FUND", "variables": {"amount": 1, "account": "@alice"}}


@pytest.mark.parametrize(
    "body",
    [
        {"legalName": "x", "legalDocument": "1", "metadata": {"a\x00": 1}},
        {"legalName": "x", "legalDocument": "1", "metadata": {"a": "b\x00"}},
        {"legalName": "x\x00", "legalDocument": "1"},
        {"legalName": "x", "legalDocument": "1", "status": {"code": "\x00"}},
    ],
)
def test_it_refuses_nul_characters_in_json_bodies(api, body):
    assert_error(api.post("/v1/organizations", body), 400, "0047")
    assert not Organization.objects.exists()


def test_it_refuses_nul_characters_in_postings_and_their_keys(book):
    before = Transaction.objects.count()
    assert_error(book.post({**PAY, "metadata": {"note": "\x00"}}), 400, "0047")
    assert_error(book.post(PAY, HTTP_IDEMPOTENCY_KEY="key\x00"), 400, "0047")
    batch = {"transactions": [{**PAY, "metadata": {"k": "\x00"}}]}
    assert_error(book.api.post(f"{book.url}/transactions/batch", batch), 400, "0047")
    assert Transaction.objects.count() == before
    assert not IdempotencyKey.objects.exists()


@pytest.mark.parametrize(
    "query", ["metadata=a:%00", "metadata.k=%00", "status=%00", "alias=%00", "%00=1"]
)
def test_it_refuses_nul_characters_in_query_parameters(book, query):
    assert_error(book.api.get(f"{book.url}/accounts?{query}"), 400, "0082")
    assert_error(book.api.get(f"{book.url}/transactions?{query}"), 400, "0082")


def test_it_finds_no_template_whose_code_holds_a_nul(book):
    for path in ("transaction-types", "transaction-templates"):
        assert_error(book.api.get(f"{book.url}/{path}/F%00"), 404, "0007")
    url = f"{book.url}/transaction-templates/F%00"
    assert_error(book.api.put(url, FUND, content_type="text/plain"), 404, "0007")
    assert_error(book.api.delete(url), 404, "0007")


@pytest.mark.parametrize(
    "text",
    [
        FUND.replace("(code FUND)", "(code F2) ; a comment with a \x00"),
        FUND.replace("(code FUND)", "(code F2)").replace('"Deposit"', '"Dep\x00osit"'),
        FUND.replace("(code FUND)", '(code F2) (metadata (k "v\x00"))'),
        "\x00",
    ],
)
def test_it_refuses_nul_characters_in_template_text_with_their_position(book, text):
    response = book.api.post(
        f"{book.url}/transaction-templates", text.encode(), content_type="text/plain"
    )
    body = assert_error(response, 400, "0017")
    index = text.index("\x00")
    line = text.count("\n", 0, index) + 1
    column = index - text.rfind("\n", 0, index)
    assert re.match(rf"line {line}, column {column}: unexpected NUL", body["description"])
    assert not TransactionTemplate.objects.filter(code="F2").exists()


def test_it_refuses_json_nested_too_deeply(api):
    deep = "[" * 100_000 + "]" * 100_000
    response = api.client.post("/v1/organizations", deep, content_type="application/json")
    assert_error(response, 400, "0047")


@pytest.mark.parametrize(
    "path",
    [
        "/accounts/{account}/balance?at=9999-12-31T23:59:59-1400",
        "/accounts/{account}/balance?at=0001-01-01T00:00:00%2B1400",
        "/transactions?beginDate=0001-01-01T00:00:00%2B1400",
        "/transactions?endDate=9999-12-31",
    ],
)
def test_it_refuses_moments_outside_the_calendar(book, path):
    account = book.accounts["@alice"]["id"]
    url = book.url + path.format(account=account)
    assert_error(book.api.get(url), 400, "0077")


def test_it_draws_charts_up_to_the_calendar_s_edges(book):
    url = f"{book.url}/charts"
    for start, end in (("0001-01-01", "0001-01-02"), ("9999-12-30", "9999-12-31")):
        body = {"type": "totalTransactions", "startDate": start, "endDate": end}
        assert_error(book.api.post(url, body), 400, "0077")
    body = {"type": "transactionsByStatus", "startDate": "0001-01-02", "endDate": "9999-12-30"}
    response = book.api.post(url, body)
    assert response.status_code == 200, response.content
