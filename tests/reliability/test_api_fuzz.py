"""API fuzzing with schemathesis against ``/v1/openapi.json``, in process through the WSGI app,
with a real token and real ids.

Every operation of the schema gets a bounded number of generated requests (valid and invalid
bodies, queries and headers). Path parameters mostly name real resources of a populated ledger
(an organization, a ledger, a funded account, a pending transaction, a template), so that the
requests reach the code behind the 404. The checks: no 5xx ever, every status code is one the
schema documents, and every response (body, content type, headers) conforms to the schema.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from typing import Any

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.conftest import make_token
from tests.reliability.conftest import RESOURCE_OF_SEGMENT, scaled
from tests.transactions.conftest import Book

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    response_headers_conformance,
]
FIGURES: Counter[str] = Counter()

schema = schemathesis.openapi.from_wsgi("/v1/openapi.json", get_wsgi_application())


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
    make("instruments", {"name": "Gold", "type": "commodity", "code": "XAU"})
    org, ledger = url.split("/")[3], url.split("/")[5]
    return {
        "token": make_token("fuzzer"),
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
        "webhook": make("webhooks", {"url": "https://example.com/hook", "eventTypes": ["*"]}),
    }


def aim(case: Any, real: dict[str, Any]) -> None:
    """Point the path at real resources, except for one generated value in eight."""
    segments = case.operation.path.split("/")
    for index, segment in enumerate(segments):
        if not (segment.startswith("{") and segment.endswith("}")):
            continue
        name = segment[1:-1]
        generated = str((case.path_parameters or {}).get(name, ""))
        keep_generated = hashlib.sha256(generated.encode()).digest()[0] < 32
        if name not in {"organization_id", "ledger_id"} and keep_generated:
            continue
        resource = RESOURCE_OF_SEGMENT[segments[index - 1]]
        case.path_parameters = {**(case.path_parameters or {}), name: real[resource]}


@pytest.fixture(scope="module", autouse=True)
def figures() -> Any:
    yield
    total = sum(FIGURES.values())
    print(f"schemathesis: {total} requests;", dict(sorted(FIGURES.items())))


@schema.parametrize()
@settings(
    max_examples=scaled(25, 300),
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
@pytest.mark.filterwarnings("ignore")
@pytest.mark.slow
def test_the_api_honours_its_schema(case, real, wsgi_in_test_transaction):
    aim(case, real)
    response = case.call(headers={"Authorization": f"Bearer {real['token']}"})
    FIGURES[str(response.status_code)] += 1
    case.validate_response(response, checks=CHECKS)
