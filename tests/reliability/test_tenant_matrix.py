"""Tenant isolation, endpoint by endpoint, read from the OpenAPI schema so that a new endpoint is
covered the day it is added.

- A token limited to organization A, aimed at organization B's resources (B's ids in every
  path parameter; A's organization with B's ledger; A's ledger with B's items), gets 404
  ``0007`` on every method, exactly like a missing id, and nothing in the database changes.
- A read-only token gets 403 ``0043`` on every write (POST, PUT, PATCH, DELETE) and nothing
  changes; charts and dry runs are reads and answer 200.
- A control: the same writes with an unlimited read-write token succeed, so the bodies used
  above were able to do harm.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import pytest
from django.apps import apps

from organizations.models import Account
from tests.conftest import Api, assert_error, make_token
from tests.reliability.conftest import RESOURCE_OF_SEGMENT
from tests.transactions.conftest import FUND, HOLD, Book

WRITES = ("post", "put", "patch", "delete")
PARAM = re.compile(r"\{(\w+)\}")
TENANT_APPS = ("outbox", "organizations", "instruments", "templates_dsl", "transactions")


NEW_TEMPLATE = FUND.replace("(code FUND)", "(code INTRUDER)")
INLINE_TEXT = (
    "(transaction-template v1 (chart-of-accounts-group-name G) (code INLINE)"
    " (send BRL 5|2 (source (from @external/BRL :amount BRL 5|2)))"
    " (distribute (to @alice :amount BRL 5|2)))"
)
FIVE = {"terms": [{"literal": 5}], "scale": 2}
INLINE_JSON = {
    "chartOfAccountsGroupName": "G",
    "send": {
        "asset": "BRL",
        "amount": FIVE,
        "source": [{"account": {"alias": "@external/BRL"}, "asset": "BRL", "amount": FIVE}],
    },
    "distribute": {"to": [{"account": {"alias": "@alice"}, "asset": "BRL", "amount": FIVE}]},
}


def body_for(path: str, method: str) -> tuple[Any, str | None]:
    """A body that this write would accept from a token allowed to make it."""
    tail = [s for s in path.split("/") if s and not s.startswith("{")][-1]
    item = path.endswith("}")
    if method == "delete":
        return None, None
    if "transaction-templates" in path:
        text = FUND.replace("Deposit", "Changed") if item else NEW_TEMPLATE
        return text, "text/plain"
    if tail in {"commit", "revert", "cancel"}:
        return None, None
    if tail == "dsl":
        return INLINE_TEXT, "text/plain"
    if method == "patch":
        field = {
            "organizations": "legalName",
            "instrument-rates": "amount",
            "asset-rates": "amount",
            "webhooks": "description",
            "balance-monitors": "description",
        }.get(tail, "name")
        return {field: 2 if field == "amount" else "Changed"}, None
    bodies: dict[str, Any] = {
        "organizations": {"legalName": "Intruder", "legalDocument": "1"},
        "ledgers": {"name": "Intruder"},
        "accounts": {"alias": "@intruder", "assetCode": "BRL", "name": "x"},
        "portfolios": {"name": "Intruder"},
        "products": {"name": "Intruder"},
        "instruments": {"name": "Euro", "type": "currency", "code": "EUR"},
        "instrument-rates": {
            "baseInstrumentCode": "BRL",
            "counterInstrumentCode": "XAU",
            "amount": 3,
            "scale": 0,
            "source": "intruder",
        },
        "asset-rates": {
            "baseAssetCode": "BRL",
            "counterAssetCode": "XAU",
            "amount": 4,
            "scale": 0,
            "source": "intruder-2",
        },
        "transactions": {
            "transactionTypeCode": "FUND",
            "variables": {"amount": 5, "account": "@alice"},
        },
        "charts": {"type": "totalAmountByAsset"},
        "json": INLINE_JSON,
        "webhooks": {"url": "https://example.com/hook", "eventTypes": ["*"]},
        "balance-monitors": {
            # The one @bob there is: the book's, in B's ledger.
            "accountId": str(Account.objects.get(alias="@bob").pk),
            "measure": "onHold",
            "condition": "above",
            "threshold": {"amount": 1, "scale": 0},
        },
    }
    bodies["batch"] = {"transactions": [bodies["transactions"]] * 2}
    if tail not in bodies:
        raise AssertionError(f"tests/reliability: give {method.upper()} {path} a body")
    return bodies[tail], None


@dataclass
class World:
    ids: dict[str, str]  # B's resources
    mine: dict[str, str]  # A's organization and ledger
    outsider: Api  # limited to A
    reader: Api  # read-only, unlimited
    root: Api


@pytest.fixture
def world(book: Book) -> World:
    api = book.api
    _, org_b, _, ledger_b = book.url.strip("/").split("/")[1:5]
    org_a = api.post("/v1/organizations", {"legalName": "A", "legalDocument": "A"}).json()
    ledger_a = api.post(f"/v1/organizations/{org_a['id']}/ledgers", {"name": "A"}).json()
    url = book.url

    def make(path: str, body: dict[str, Any]) -> str:
        response = api.post(f"{url}/{path}", body)
        assert response.status_code == 201, response.content
        return response.json()["id"]

    make("instruments", {"name": "Gold", "type": "commodity", "code": "XAU"})
    book.fund("@alice", 10_000)
    held = book.post(
        {
            "transactionTypeCode": "PAYMENT_HELD",
            "variables": {"amount": 100, "fee": 1, "source": "@alice", "destination": "@bob"},
        }
    )
    assert held.status_code == 201, held.content
    later = book.post(
        {
            "transactionTypeCode": "FUND",
            "variables": {"amount": 5, "account": "@alice"},
            "scheduledFor": "2099-01-01T00:00:00Z",
        }
    )
    assert later.status_code == 202, later.content
    ids = {
        "organization": org_b,
        "ledger": ledger_b,
        "account": book.accounts["@alice"]["id"],
        "portfolio": make("portfolios", {"name": "P"}),
        "product": make("products", {"name": "Q"}),
        "instrument": api.get(f"{url}/instruments").json()[0]["id"],
        "rate": make(
            "asset-rates",
            {"baseAssetCode": "BRL", "counterAssetCode": "XAU", "amount": 5, "scale": 2},
        ),
        "transaction": held.json()["id"],
        "template": "FUND",
        "alias": "@alice",
        "webhook": make("webhooks", {"url": "https://example.com/b", "eventTypes": ["*"]}),
        "scheduled": later.json()["id"],
        "monitor": make(
            "balance-monitors",
            {
                "accountId": book.accounts["@bob"]["id"],
                "measure": "available",
                "condition": "above",
                "threshold": {"amount": 10**9, "scale": 2},
            },
        ),
    }
    assert HOLD  # the held template is part of the book
    return World(
        ids=ids,
        mine={"organization": org_a["id"], "ledger": ledger_a["id"]},
        outsider=Api(make_token("outsider", organization_ids=[org_a["id"]])),
        reader=Api(make_token("reader", read_only=True)),
        root=api,
    )


def schema_operations(api: Api) -> list[tuple[str, str]]:
    schema = json.loads(api.get("/v1/openapi.json").content)
    return [
        (path, method)
        for path, item in sorted(schema["paths"].items())
        for method in sorted(item)
        if method in {"get", "post", "put", "patch", "delete"}
    ]


def fill(path: str, ids: dict[str, str]) -> str:
    segments = path.split("/")
    for index, segment in enumerate(segments):
        match = PARAM.fullmatch(segment)
        if match:
            resource = RESOURCE_OF_SEGMENT.get(segments[index - 1])
            assert resource, f"tests/reliability: which resource does {segment} in {path} name?"
            segments[index] = ids[resource]
    return "/".join(segments)


def send(api: Api, path: str, method: str, url: str) -> Any:
    body, content_type = body_for(path, method) if method in WRITES else (None, None)
    if content_type:
        return getattr(api, method)(url, body, content_type=content_type)
    if body is None:
        return getattr(api.client, method)(url)
    return getattr(api, method)(url, body)


def snapshot() -> dict[str, list[dict[str, Any]]]:
    """Every row of every tenant table (tokens aside: using one records nothing)."""
    out = {}
    for app in TENANT_APPS:
        for model in apps.get_app_config(app).get_models():
            if model._meta.model_name == "apitoken":
                continue
            out[model._meta.label] = list(model.objects.order_by("pk").values())
    return out


def test_a_token_of_one_organization_finds_nothing_of_another(world):
    operations = schema_operations(world.root)
    scoped = [(p, m) for p, m in operations if "{organization_id}" in p]
    assert len(scoped) >= 40, scoped
    mixed_org = {**world.ids, "organization": world.mine["organization"]}
    mixed_ledger = {**mixed_org, "ledger": world.mine["ledger"]}
    before = snapshot()
    tried = 0
    for path, method in scoped:
        targets = [fill(path, world.ids)]
        if "{ledger_id}" in path:
            targets.append(fill(path, mixed_org))
            if PARAM.search(path.split("{ledger_id}", 1)[1]):
                targets.append(fill(path, mixed_ledger))
        for url in targets:
            response = send(world.outsider, path, method, url)
            assert response.status_code == 404, (method, url, response.content)
            assert response.json()["code"] == "0007", (method, url, response.content)
            tried += 1
    assert snapshot() == before
    print(f"tenant matrix: {len(scoped)} operations, {tried} cross-tenant requests, all 404")


def test_a_read_only_token_may_not_write_anywhere(world):
    operations = [(p, m) for p, m in schema_operations(world.root) if m in WRITES]
    before = snapshot()
    reads = 0
    for path, method in operations:
        url = fill(path, world.ids)
        response = send(world.reader, path, method, url)
        if path.endswith("/charts"):
            assert response.status_code == 200, response.content
            reads += 1
            continue
        assert_error(response, 403, "0043")
        if path.endswith("/transactions") and method == "post":
            dry = send(world.reader, path, method, url + "?dryRun=true")
            assert dry.status_code == 200, dry.content
            reads += 1
    assert reads == 2
    assert snapshot() == before


def test_the_bodies_used_above_are_accepted_from_a_token_allowed_to_write(world):
    """The control for both tests above: every non-DELETE write succeeds for the root token.
    Deletes go last, deepest first, and answer 204 or a refusal (0013 the second time one
    record is deleted through its other face, 0012 or 0008 while something remains)."""
    operations = [(p, m) for p, m in schema_operations(world.root) if m in WRITES]
    for path, method in [op for op in operations if op[1] != "delete"]:
        url = fill(path, world.ids)
        if path.endswith("/cancel") or path.endswith("/revert"):
            continue  # the held transaction is committed below; these are proven elsewhere
        response = send(world.root, path, method, url)
        assert 200 <= response.status_code < 300, (method, url, response.content)
    deletes = sorted((op for op in operations if op[1] == "delete"), key=lambda o: -len(o[0]))
    for path, method in deletes:
        response = send(world.root, path, method, fill(path, world.ids))
        assert response.status_code in {204, 400, 422}, (path, response.content)
