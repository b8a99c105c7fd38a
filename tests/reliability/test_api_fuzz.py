"""API fuzzing with schemathesis against ``/v1/openapi.json``, in process through the WSGI app,
with a real token and real ids.

Every operation of the schema gets a bounded number of generated requests (valid and invalid
bodies, queries and headers). Path parameters mostly name real resources of a populated ledger
(an organization, a ledger, a funded account, a pending transaction, a template), so that the
requests reach the code behind the 404. The checks: no 5xx ever, every status code is one the
schema documents, and every response (body, content type, headers) conforms to the schema.
``FUZZ_DEBUG=1`` prints each refused valid request with the API's answer.
"""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from typing import Any

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.checks import CHECKS as CHECKS_REGISTRY

from tests.conftest import make_token
from tests.reliability.conftest import RESOURCE_OF_SEGMENT, scaled
from tests.reliability.fuzz_client import Caller, know
from tests.transactions.conftest import Book

FIGURES: Counter[str] = Counter()
# Positive requests (every part generated from the schema as valid) whose path names real
# resources, per operation, and how many of them the API accepted (2xx).
POSITIVE: Counter[str] = Counter()
ACCEPTED: Counter[str] = Counter()
MIN_ACCEPTED = 0.9
# Operations that do not reach MIN_ACCEPTED yet, with why and their measured share. A list to
# shrink: an operation listed here is still measured, and one that is not must reach it.
# What the schema cannot say (names unique among active rows, references to resources that must
# exist, a template text that is a grammar, amounts that add up, a cursor the API issued) the
# run knows as a client does: ``fuzz_client.know`` rewrites each generated valid request into
# the one a client would send, and never drops one.
NOT_YET: dict[str, str] = {}


def short_label(method: str, path: str) -> str:
    """``POST /accounts`` for ``POST /v1/organizations/{..}/ledgers/{..}/accounts``."""
    ledger, organization = (
        "/v1/organizations/{organization_id}/ledgers/{ledger_id}",
        ("/v1/organizations/{organization_id}"),
    )
    if path.startswith(ledger + "/"):
        path = path[len(ledger) :]
    elif path.startswith(organization + "/"):
        path = path[len(organization) :]
    else:
        path = path.removeprefix("/v1")
    return f"{method.upper()} {path}"


schema = schemathesis.openapi.from_wsgi("/v1/openapi.json", get_wsgi_application())
# A body over the size bound is refused with 413 (0122, documented on every write): a rejection
# as much as a 400 is.
REJECTION = schema.config.checks.negative_data_rejection
REJECTION.expected_statuses = [*REJECTION.expected_statuses, "413"]
# The checks, once loading the schema has registered the OpenAPI ones (read before it, the
# registry holds only ``not_a_server_error``): no 5xx; status codes, content types, headers and
# bodies as the schema documents them; and every request the schema calls invalid refused. Not
# the checks that send requests of their own or judge the acceptance of valid data, which this
# run measures itself (``MIN_ACCEPTED``).
CONFORMANCE = {
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
    "negative_data_rejection",
}
CHECKS = [check for check in CHECKS_REGISTRY.get_all() if check.__name__ in CONFORMANCE]
assert len(CHECKS) == len(CONFORMANCE), [check.__name__ for check in CHECKS]


@pytest.fixture
def wsgi_in_test_transaction() -> Any:
    """Requests go through the real WSGI handler, whose request signals close connections
    that are inside a transaction: that would close the test's own. Django's test client
    detaches the same handler the same way, only during its own requests, so this fixture
    comes after the ones that use the test client."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture(autouse=True)
def unbounded_subscriptions(settings: Any) -> None:
    """The run creates far more webhook subscriptions than an organization may keep; their
    bound has tests of its own (tests/outbox/test_worker.py)."""
    settings.WEBHOOK_MAX_SUBSCRIPTIONS = 1_000_000


@pytest.fixture
def real(book: Book) -> dict[str, Any]:
    """A populated ledger, and a token that reaches it."""
    api, url = book.api, book.url

    def make(path: str, body: dict[str, Any]) -> str:
        response = api.post(f"{url}/{path}", body)
        assert response.status_code == 201, response.content
        return response.json()["id"]

    book.fund("@alice", 1_000_000)
    held = book.post(
        {
            "transactionTypeCode": "PAYMENT_HELD",
            "variables": {"amount": 100, "fee": 1, "source": "@alice", "destination": "@bob"},
        }
    )
    later = book.post(
        {
            "transactionTypeCode": "FUND",
            "variables": {"amount": 5, "account": "@alice"},
            "scheduledFor": "2099-01-01T00:00:00Z",
        }
    )
    assert later.status_code == 202, later.content
    make("instruments", {"name": "Gold", "type": "commodity", "code": "XAU"})
    org, ledger = url.split("/")[3], url.split("/")[5]
    token = make_token("fuzzer")
    return {
        "token": token,
        "caller": Caller(token, org, ledger),
        "organization": org,
        "ledger": ledger,
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
        "webhook": make("webhooks", {"url": "https://example.com/hook", "eventTypes": ["*"]}),
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


def aim(case: Any, real: dict[str, Any]) -> bool:
    """Point the path at real resources, except for one generated value in eight; True when
    every path parameter names a real resource."""
    aimed = True
    segments = case.operation.path.split("/")
    for index, segment in enumerate(segments):
        if not (segment.startswith("{") and segment.endswith("}")):
            continue
        name = segment[1:-1]
        generated = str((case.path_parameters or {}).get(name, ""))
        keep_generated = hashlib.sha256(generated.encode()).digest()[0] < 32
        if name not in {"organization_id", "ledger_id"} and keep_generated:
            aimed = False
            continue
        resource = RESOURCE_OF_SEGMENT[segments[index - 1]]
        case.path_parameters = {**(case.path_parameters or {}), name: real[resource]}
    return aimed


@pytest.fixture(scope="module", autouse=True)
def figures() -> Any:
    yield
    total = sum(FIGURES.values())
    print(f"schemathesis: {total} requests;", dict(sorted(FIGURES.items())))
    shares = {op: ACCEPTED[op] / POSITIVE[op] for op in POSITIVE}
    for op, share in sorted(shares.items(), key=lambda item: item[1]):
        print(f"accepted {ACCEPTED[op]:4d} of {POSITIVE[op]:4d} positive  {share:6.1%}  {op}")
    refused = {
        op: f"{share:.0%}"
        for op, share in shares.items()
        if share < MIN_ACCEPTED and op not in NOT_YET
    }
    if refused:
        pytest.fail(f"operations accepting under {MIN_ACCEPTED:.0%} of positive data: {refused}")


@schema.parametrize()
@settings(
    max_examples=scaled(25, 300),
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
@pytest.mark.filterwarnings("ignore")
@pytest.mark.slow
def test_the_api_honours_its_schema(case, real, wsgi_in_test_transaction):
    aimed = aim(case, real)
    label = short_label(case.operation.method, case.operation.path)
    positive = case.meta is not None and not case.meta.generation.mode.is_negative
    if aimed and positive:
        know(case, label, real, real["caller"])
    headers = {k.lower() for k in case.headers or {}}
    if positive or "authorization" in headers:
        # The run's token (a generated one would only be refused). A negative case that left the
        # header out keeps it out: its defect is the missing token, and 401 is its answer.
        response = case.call(headers={"Authorization": f"Bearer {real['token']}"})
    else:
        response = case.call()
    FIGURES[str(response.status_code)] += 1
    if aimed and positive:
        POSITIVE[label] += 1
        if os.environ.get("FUZZ_DEBUG") and response.status_code >= 300:
            print(
                "REFUSED",
                label,
                response.status_code,
                response.text[:300],
                str(case.body)[:300],
                case.headers,
            )
        ACCEPTED[label] += 200 <= response.status_code < 300
    case.validate_response(response, checks=CHECKS)
