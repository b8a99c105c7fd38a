"""What the served schema (/v1/openapi.json) tells a client, held to what the server does
(docs/CLIENTS.md): the real patterns of body strings, template bodies that are required, the
statuses a posting answers, one idempotency header, and the next page's place on every list."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from instruments.services import CODE_PATTERN
from organizations.models import Account
from templates_dsl.lexer import NAME_RE
from tests.transactions.conftest import FUND, Book, make_book

LEDGER = "/v1/organizations/{organization_id}/ledgers/{ledger_id}"
POSTINGS = ("/transactions", "/transactions/dsl", "/transactions/json")


@pytest.fixture
def schema(anon, db) -> dict[str, Any]:
    response = anon.get("/v1/openapi.json")
    assert response.status_code == 200
    return json.loads(response.content)


@pytest.fixture
def book(api, ledger_url) -> Book:
    return make_book(api, ledger_url)


def body_property(schema: dict[str, Any], component: str, name: str) -> dict[str, Any]:
    return schema["components"]["schemas"][component]["properties"][name]


def test_body_strings_state_the_pattern_the_server_enforces(schema):
    alias = Account.ALIAS_PATTERN
    code = f"^{CODE_PATTERN.pattern}$"
    template_code = f"^{NAME_RE.pattern}$"
    expected = {
        ("AccountCreateInRequest", "alias"): alias,
        ("PatchedAccountUpdateInRequest", "alias"): alias,
        ("AccountCreateInRequest", "assetCode"): code,
        ("InstrumentRateCreateInRequest", "baseInstrumentCode"): code,
        ("InstrumentRateCreateInRequest", "counterInstrumentCode"): code,
        ("AssetRateCreateInRequest", "baseAssetCode"): code,
        ("AssetRateCreateInRequest", "counterAssetCode"): code,
        ("TransactionInRequest", "transactionTypeCode"): template_code,
        ("TransactionBatchItemInRequest", "transactionTypeCode"): template_code,
    }
    found = {key: body_property(schema, *key).get("pattern") for key in expected}
    assert found == expected
    account_type = body_property(schema, "AccountCreateInRequest", "type")["pattern"]
    assert re.search(account_type, "deposit") and re.search(account_type, "externals")
    assert not re.search(account_type, "external") and not re.search(account_type, "a\x00b")


def test_a_blank_string_matches_one_alternative_at_most(schema):
    """A blank string is valid where the server takes it: never twice in a ``oneOf``, which
    JSON Schema would then refuse (a blank address line is accepted by the server)."""
    found: list[Any] = []

    def visit(node: Any) -> None:
        if isinstance(node, list):
            for item in node:
                visit(item)
        elif isinstance(node, dict):
            alternatives = node.get("oneOf") or []
            blanks = [
                a
                for a in alternatives
                if a.get("type") == "string"
                and not a.get("minLength")
                and re.search(a.get("pattern", ""), "") is not None
            ]
            if len(blanks) > 1:
                found.append(node)
            for value in node.values():
                visit(value)

    visit(schema)
    assert found == []
    line1 = body_property(schema, "AddressInRequest", "line1")
    assert line1["pattern"] == "^[^\\u0000]*$" and "oneOf" not in line1


def test_an_account_type_the_pattern_refuses_is_refused(api, ledger_url):
    created = api.post(
        f"{ledger_url}/instruments", {"name": "R", "type": "currency", "code": "BRL"}
    )
    assert created.status_code == 201
    body = {"assetCode": "BRL", "alias": "@x", "type": "external"}
    assert api.post(f"{ledger_url}/accounts", body).status_code == 422
    lower = {"assetCode": "brl", "alias": "@y"}
    assert api.post(f"{ledger_url}/accounts", lower).status_code == 422


def test_a_template_body_is_required_and_not_empty(schema):
    for path, method in (
        ("/transaction-templates", "post"),
        ("/transaction-templates/{code}", "put"),
    ):
        body = schema["paths"][LEDGER + path][method]["requestBody"]
        assert body["required"] is True, (path, body)
        content = body["content"]
        assert list(content) == ["text/plain", "application/json"]
        assert content["text/plain"]["schema"]["minLength"] == 1
        text, form = content["application/json"]["schema"]["oneOf"]
        assert (text["type"], text["minLength"]) == ("string", 1)
        assert form == {"$ref": "#/components/schemas/TemplateTextInRequest"}
    dsl = body_property(schema, "TemplateTextInRequest", "dsl")
    assert dsl["type"] == "string" and dsl["minLength"] == 1
    for path in ("/transactions/dsl", "/transactions/json"):
        assert schema["paths"][LEDGER + path]["post"]["requestBody"]["required"] is True
    for path, method in (
        ("/transactions/dsl", "post"),
        ("/transaction-templates", "post"),
        ("/transaction-templates/{code}", "put"),
    ):
        assert "multipart/form-data" in schema["paths"][LEDGER + path][method]["description"]


def test_a_posting_documents_what_it_answers(schema, book):
    """Created and replayed: 201 (with Idempotent-Replayed on a replay); a dry run: 200."""
    for path in POSTINGS:
        responses = schema["paths"][LEDGER + path]["post"]["responses"]
        assert set(responses["201"]["headers"]) == {"Idempotent-Replayed"}, path
        assert "replayed" in responses["201"]["description"]
        assert set(responses["200"]["headers"]) == {"Dry-Run"}, path
        assert "replay" not in responses["200"]["description"].lower()
    batch = schema["paths"][LEDGER + "/transactions/batch"]["post"]["responses"]
    assert {"Idempotent-Replayed"} <= set(batch["200"]["headers"]) & set(batch["201"]["headers"])
    body = {"transactionTypeCode": "FUND", "variables": {"amount": 5, "account": "@bob"}}
    first = book.post(body, HTTP_IDEMPOTENCY_KEY="replayed-1")
    again = book.post(body, HTTP_IDEMPOTENCY_KEY="replayed-1")
    assert (first.status_code, again.status_code, again["Idempotent-Replayed"]) == (
        201,
        201,
        "true",
    )
    dry = book.api.post(f"{book.url}/transactions?dryRun=true", body)
    assert (dry.status_code, dry["Dry-Run"]) == (200, "true")


def test_one_idempotency_header_is_declared_and_both_spellings_work(schema, book):
    for path in (*POSTINGS, "/transactions/batch"):
        operation = schema["paths"][LEDGER + path]["post"]
        headers = [p["name"] for p in operation["parameters"] if p["in"] == "header"]
        assert sorted(headers) == ["Idempotency-Key", "tolerance"], (path, headers)
        [key] = [p for p in operation["parameters"] if p["name"] == "Idempotency-Key"]
        assert "idempotencyKey" in key["description"]
    body = {"transactionTypeCode": "FUND", "variables": {"amount": 7, "account": "@bob"}}
    first = book.post(body, HTTP_IDEMPOTENCYKEY="spelled")
    again = book.post(body, HTTP_IDEMPOTENCYKEY="spelled")
    assert again["Idempotent-Replayed"] == "true" and again.json()["id"] == first.json()["id"]


def test_every_list_declares_link_and_next_cursor(schema):
    lists = [
        (path, operation)
        for path, item in schema["paths"].items()
        for method, operation in item.items()
        if method == "get" and any(p["name"] == "cursor" for p in operation.get("parameters", []))
    ]
    assert len(lists) >= 15
    for path, operation in lists:
        headers = operation["responses"]["200"].get("headers", {})
        if path.endswith("/events"):  # paged by their events' own cursors: Link only
            assert set(headers) == {"Link"}, path
            continue
        assert set(headers) == {"Link", "X-Next-Cursor"}, path
        assert headers["X-Next-Cursor"]["schema"]["pattern"] == "^[A-Za-z0-9_-]+$"


@pytest.mark.parametrize(
    "path", ["accounts", "transactions", "transaction-templates", "balances", "operations"]
)
def test_a_list_answers_the_next_cursor_in_a_header_of_its_own(book, path):
    book.fund("@alice", 100)
    book.fund("@alice", 100)
    if path == "operations":  # a statement, paged by balance version
        path = f"accounts/{book.accounts['@alice']['id']}/operations"
    url = f"{book.url}/{path}"
    first = book.api.get(url, {"limit": 1})
    link, cursor = first["Link"], first["X-Next-Cursor"]
    assert parse_qs(urlsplit(link[1 : link.index(">")]).query)["cursor"] == [cursor]
    second = book.api.get(url, {"limit": 1, "cursor": cursor})
    assert second.status_code == 200 and second.content != first.content
    last = book.api.get(url, {"limit": 1000})
    assert not last.has_header("Link") and not last.has_header("X-Next-Cursor")


def test_the_template_list_documents_plain_text_first(schema, book):
    responses = schema["paths"][LEDGER + "/transaction-templates"]["get"]["responses"]
    content = responses["200"]["content"]
    assert list(content) == ["text/plain", "application/json"]
    assert content["text/plain"]["schema"] == {"type": "string"}
    assert content["application/json"]["schema"]["type"] == "array"
    plain = book.api.get(f"{book.url}/transaction-templates")
    assert plain["Content-Type"] == "text/plain; charset=utf-8"
    assert plain.content.decode().startswith("(" + FUND)


def test_an_amount_of_38_digits_is_not_declared_an_int64(schema, book):
    """The server takes amounts up to 10^38 - 1; a schema saying int64 would have clients (and
    fuzzers) take 2^63 for an invalid amount, which the server accepts."""
    limit = schema["components"]["schemas"]["OverdraftLimitInRequest"]["properties"]["amount"]
    assert limit == {"type": "integer", "minimum": 0, "maximum": 10**38 - 1}
    account = book.accounts["@alice"]["id"]
    body = {"overdraftLimit": {"amount": 2**63, "scale": 0}}
    assert book.api.patch(f"{book.url}/accounts/{account}", body).status_code == 200
