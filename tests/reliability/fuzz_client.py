"""What a real client knows and a schema cannot say, for the schemathesis run of
``test_api_fuzz.py``: a cursor comes from a list's ``Link`` header, names are unique, an asset
code names an instrument of the ledger, an alias is new, a DELETE or a commit acts on a
resource the client just made, a chart's start comes before its end.

``know`` rewrites a generated *valid* request into the one a client would send (it never drops
a request and never looks at an answer to decide what is counted). Every resource it makes on
the way must be made (201), or the test fails.
"""

from __future__ import annotations

import itertools
import json
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pycountry
from django.core.wsgi import get_wsgi_application
from werkzeug.test import Client

from tests.transactions.conftest import FUND

_serial = itertools.count(1)
# ISO 4217 codes a client has not registered yet (the book holds BRL, the fixture XAU).
_currencies = iter(
    sorted(c.alpha_3 for c in pycountry.currencies if c.alpha_3 not in {"BRL", "XAU"})
)


def letters(number: int) -> str:
    """A distinct upper-case word per number: A, B, ..., Z, BA, BB ..."""
    out = ""
    while True:
        number, digit = divmod(number, 26)
        out = chr(ord("A") + digit) + out
        if not number:
            return out


class Caller:
    def __init__(self, token: str, org: str, ledger: str) -> None:
        self.client = Client(get_wsgi_application())
        self.headers = {"Authorization": f"Bearer {token}"}
        self.ledger_url = f"/v1/organizations/{org}/ledgers/{ledger}"
        self.org_url = f"/v1/organizations/{org}"

    def make(self, path: str, body: Any, *, text: bool = False) -> dict[str, Any]:
        if text:
            response = self.client.post(
                path, data=body, headers={**self.headers, "Content-Type": "text/plain"}
            )
        else:
            response = self.client.post(path, json=body, headers=self.headers)
        assert response.status_code == 201, (path, response.status_code, response.get_data())
        return {} if text else json.loads(response.get_data())

    def next_cursor(self, path: str) -> str | None:
        """The cursor of the second page of ``path``, as its first page's Link names it."""
        response = self.client.get(path, query_string={"limit": 1}, headers=self.headers)
        link = response.headers.get("Link")
        if response.status_code != 200 or not link:
            return None
        url = link[link.index("<") + 1 : link.index(">")]
        return parse_qs(urlsplit(url).query)["cursor"][0]


def _unique(value: Any, limit: int = 256) -> str:
    suffix = f" #{next(_serial)}"
    text = value if isinstance(value, str) else ""
    return text[: limit - len(suffix)] + suffix


def _fresh(caller: Caller, label: str, real: dict[str, Any]) -> tuple[str, str] | None:
    """For an operation that uses its resource up (a DELETE, a commit): a new one to use up,
    as (path parameter, value)."""
    led, n = caller.ledger_url, next(_serial)
    if label == "DELETE /products/{id}":
        return "id", caller.make(f"{led}/products", {"name": f"fresh {n}"})["id"]
    if label == "DELETE /portfolios/{id}":
        return "id", caller.make(f"{led}/portfolios", {"name": f"fresh {n}"})["id"]
    if label == "DELETE /accounts/{id}":
        body = {"name": "fresh", "assetCode": "BRL", "alias": f"@fresh{n}"}
        return "id", caller.make(f"{led}/accounts", body)["id"]
    if label == "DELETE /instruments/{id}":
        body = {"name": "fresh", "type": "commodity", "code": f"FRESH{letters(n)}"}
        return "id", caller.make(f"{led}/instruments", body)["id"]
    if label in {"DELETE /asset-rates/{id}", "DELETE /instrument-rates/{id}"}:
        body = {"baseAssetCode": "XAU", "counterAssetCode": "BRL", "amount": 1, "scale": 0}
        body["source"] = f"fresh{n}"
        return "id", caller.make(f"{led}/asset-rates", body)["id"]
    if label == "DELETE /transaction-templates/{code}":
        code = f"FRESH{letters(n)}"
        caller.make(
            f"{led}/transaction-templates", FUND.replace("(code FUND)", f"(code {code})"), text=True
        )
        return "code", code
    if label == "DELETE /ledgers/{ledger_id}":
        return "ledger_id", caller.make(f"{caller.org_url}/ledgers", {"name": f"fresh {n}"})["id"]
    if label in {
        "POST /transactions/{transaction_id}/commit",
        "POST /transactions/{transaction_id}/cancel",
        "POST /transactions/{transaction_id}/revert",
    }:
        code = "PAYMENT_WITH_FEE" if label.endswith("revert") else "PAYMENT_HELD"
        variables = {"amount": 1, "fee": 1, "source": "@alice", "destination": "@bob"}
        body = {"transactionTypeCode": code, "variables": variables}
        return "transaction_id", caller.make(f"{led}/transactions", body)["id"]
    return None


# Operations whose body names something unique among active rows.
_UNIQUE_NAMES = {
    "POST /ledgers",
    "PATCH /ledgers/{ledger_id}",
    "POST /products",
    "PATCH /products/{id}",
    "POST /portfolios",
    "PATCH /portfolios/{id}",
}


def know(case: Any, label: str, real: dict[str, Any], caller: Caller) -> None:
    """Rewrite the positive ``case`` of operation ``label`` as a client would send it."""
    query = case.query if isinstance(case.query, dict) else None
    if query and "cursor" in query:
        path = case.operation.path.format(**(case.path_parameters or {}))
        cursor = caller.next_cursor(path)
        if cursor is None:
            del query["cursor"]  # a client on the first page sends no cursor
        else:
            query["cursor"] = cursor
    fresh = _fresh(caller, label, real)
    if fresh is not None:
        name, value = fresh
        case.path_parameters = {**(case.path_parameters or {}), name: value}
    body = case.body if isinstance(case.body, dict) else None
    if body is None:
        return
    if label in _UNIQUE_NAMES and "name" in body:
        body["name"] = _unique(body["name"])
    if label in {"POST /accounts", "PATCH /accounts/{id}"}:
        if label == "POST /accounts":
            body["assetCode"] = "BRL"
            body.pop("parentAccountId", None)
        if "alias" in body:
            body["alias"] = f"@fz{next(_serial)}"
        for field, resource in (("portfolioId", "portfolio"), ("productId", "product")):
            if body.get(field) is not None:
                body[field] = real[resource]
    if label in {"POST /asset-rates", "POST /instrument-rates"}:
        base, counter = ("baseAssetCode", "counterAssetCode")
        if label == "POST /instrument-rates":
            base, counter = ("baseInstrumentCode", "counterInstrumentCode")
        if base in body or counter in body:
            body[base], body[counter] = "XAU", "BRL"
    if label == "POST /organizations" and body.get("parentOrganizationId") is not None:
        body["parentOrganizationId"] = real["organization"]
    if label == "PATCH /organizations/{organization_id}":
        # The organization under test is a root: any other parent is a descendant or unknown.
        for field in ("parentOrganizationId", "parentOganizationId"):
            if field in body:
                body[field] = None
    if label == "POST /instruments" and isinstance(body.get("code"), str):
        if body.get("type") == "currency":
            body["code"] = next(_currencies)
        else:
            body["code"] = body["code"][:90] + "Z" + letters(next(_serial))
    if label == "POST /charts":
        dates = [body.get("startDate"), body.get("endDate")]
        if all(isinstance(d, str) for d in dates) and dates[0] > dates[1]:
            body["startDate"], body["endDate"] = dates[1], dates[0]
