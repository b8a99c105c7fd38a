"""What the served schema (/v1/openapi.json) tells a client, held to what the server does
(docs/CLIENTS.md): the real patterns of body strings, template bodies that are required, the
statuses a posting answers, one idempotency header, and the next page's place on every list."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

import jsonschema  # type: ignore[import-untyped]
import pytest

from instruments.services import CODE_PATTERN
from ledgerproject.api.operations import OPERATIONS
from organizations.models import Account
from templates_dsl.lexer import NAME_RE
from tests.transactions.conftest import FUND, Book, make_book

LEDGER = "/v1/organizations/{organization_id}/ledgers/{ledger_id}"
POSTINGS = ("/transactions", "/transactions/dsl", "/transactions/json")
LEDGER_PATH_ORG = "/v1/organizations/{organization_id}/ledgers"


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


# What the docs page (/v1/docs/) shows is written for the caller: words of the code that
# implements an operation have no place in it.
IMPLEMENTATION_WORDS = re.compile(
    r"serializer|subclass|queryset|``|view's scope|docstring|\bself\b|\.py\b|selectors?\b"
    r"|services?\.|\bkwargs\b|perform_",
    re.IGNORECASE,
)
METHODS = ("get", "put", "post", "patch", "delete")


def operations(schema: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (path, method, operation)
        for path, item in schema["paths"].items()
        for method, operation in item.items()
        if method in METHODS
    ]


def test_every_operation_has_a_summary_and_a_description(schema):
    missing = [
        (method, path)
        for path, method, operation in operations(schema)
        if not str(operation.get("summary", "")).strip()
        or not str(operation.get("description", "")).strip()
    ]
    assert missing == []
    too_long = [o["summary"] for _, _, o in operations(schema) if len(o["summary"]) > 60]
    assert too_long == []


def test_no_text_of_the_schema_is_written_for_maintainers(schema):
    found: list[str] = []

    def visit(node: Any, where: str) -> None:
        if isinstance(node, list):
            for index, item in enumerate(node):
                visit(item, f"{where}/{index}")
        elif isinstance(node, dict):
            for key, value in node.items():
                text = key in {"summary", "description"} and isinstance(value, str)
                if text and IMPLEMENTATION_WORDS.search(value):
                    found.append(f"{where}/{key}: {value[:80]}")
                visit(value, f"{where}/{key}")

    visit(schema, "")
    assert found == []


def validator_for(schema: dict[str, Any], body_schema: dict[str, Any]) -> Any:
    """A validator of a body against its schema, the schema's components in reach of its $refs;
    ``nullable`` (OpenAPI 3.0) read as JSON Schema's ``null`` type."""

    def nullable(node: Any) -> Any:
        if isinstance(node, list):
            return [nullable(item) for item in node]
        if not isinstance(node, dict):
            return node
        node = {key: nullable(value) for key, value in node.items()}
        if node.pop("nullable", False):
            return {"anyOf": [node, {"type": "null"}]}
        return node

    document = nullable({**body_schema, "components": schema["components"]})
    return jsonschema.Draft7Validator(document, format_checker=jsonschema.FormatChecker())


def test_every_request_body_has_an_example_its_schema_accepts(schema):
    bodies = [
        (f"{method} {path} {media}", content)
        for path, method, operation in operations(schema)
        for media, content in operation.get("requestBody", {}).get("content", {}).items()
    ]
    assert len(bodies) >= 30
    without, refused = [], []
    for where, content in bodies:
        examples = list(content.get("examples", {}).values())
        if "example" in content:
            examples.append({"value": content["example"]})
        if not examples:
            without.append(where)
        validator = validator_for(schema, content["schema"])
        for example in examples:
            errors = [e.message for e in validator.iter_errors(example["value"])]
            if errors:
                refused.append((where, errors))
    assert without == []
    assert refused == []


def test_every_operation_described_is_one_the_schema_has(schema):
    ids = {operation["operationId"] for _, _, operation in operations(schema)}
    assert set(OPERATIONS) == ids


def test_the_examples_of_a_first_session_are_accepted_as_they_are(api, schema):
    """Organization, ledger, instrument, accounts, templates, then postings: each example the
    schema offers for these bodies is answered 201 (a posting's, or 200 for a dry run)."""

    def examples(path: str, method: str, media: str = "application/json") -> list[Any]:
        content = schema["paths"][path][method]["requestBody"]["content"][media]
        return [example["value"] for example in content["examples"].values()]

    def post(url: str, body: Any, status: int = 201, **extra: Any) -> Any:
        response = api.post(url, body, **extra)
        assert response.status_code == status, (url, body, response.content)
        return response.json() if "json" in response["Content-Type"] else response

    org = post("/v1/organizations", examples("/v1/organizations", "post")[0])
    ledger = post(f"/v1/organizations/{org['id']}/ledgers", *examples(LEDGER_PATH_ORG, "post"))
    url = f"/v1/organizations/{org['id']}/ledgers/{ledger['id']}"
    for body in examples(LEDGER + "/instruments", "post"):
        post(f"{url}/instruments", body)
    for body in examples(LEDGER + "/accounts", "post"):
        post(f"{url}/accounts", body)
    post(f"{url}/accounts", {"assetCode": "BRL", "alias": "@fees/platform"})
    templates = LEDGER + "/transaction-templates"
    for text in examples(templates, "post", "text/plain"):
        post(f"{url}/transaction-templates", text, content_type="text/plain")
    for body in examples(templates, "post"):
        post(f"{url}/transaction-templates", body)
    item = templates + "/{code}"
    plain = {"content_type": "text/plain"}
    replacements = [(text, plain) for text in examples(item, "put", "text/plain")]
    for body, extra in [*replacements, *((body, {}) for body in examples(item, "put"))]:
        replaced = api.put(f"{url}/transaction-templates/PAYMENT_WITH_FEE", body, **extra)
        assert replaced.status_code == 200, replaced.content
    payment, pending, deposit, scheduled, self_committing = examples(
        LEDGER + "/transactions", "post"
    )
    post(f"{url}/transactions", deposit)
    post(f"{url}/transactions", payment)
    post(f"{url}/transactions?dryRun=true", pending, status=200)
    assert post(f"{url}/transactions", scheduled, status=202)["status"] == "SCHEDULED"
    assert post(f"{url}/transactions", self_committing)["commitAt"] == "2030-01-02T09:00:00+0000"
    for body in examples(LEDGER + "/transactions/batch", "post"):
        answer = post(f"{url}/transactions/batch", body, status=201 if body["atomic"] else 200)
        assert body["atomic"] or {item["status"] for item in answer} == {201}, answer
    for body in examples(LEDGER + "/transactions/dsl", "post"):
        post(f"{url}/transactions/dsl?dryRun=true", body, status=200)
    for text in examples(LEDGER + "/transactions/dsl", "post", "text/plain"):
        post(f"{url}/transactions/dsl?dryRun=true", text, 200, content_type="text/plain")
    for body in examples(LEDGER + "/transactions/json", "post"):
        post(f"{url}/transactions/json?dryRun=true", body, status=200)
