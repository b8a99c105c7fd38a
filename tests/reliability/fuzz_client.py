"""What a real client knows and a schema cannot say, for the schemathesis run of
``test_api_fuzz.py``: a cursor comes from a list's ``Link`` header, names are unique, an asset
code names an instrument of the ledger, an alias is new, a DELETE or a commit acts on a
resource the client just made, a chart's start comes before its end.

``know`` rewrites a generated *valid* request into the one a client would send (it never drops
a request and never looks at an answer to decide what is counted). Every resource it makes on
the way must be made (201), or the test fails.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import re
import uuid
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pycountry
from django.core.wsgi import get_wsgi_application
from django.utils import timezone
from werkzeug.test import Client

from tests.transactions.conftest import FUND

_serial = itertools.count(1)
HELD = 100  # what the holds the client makes to commit or cancel hold, in minor units
# Idempotency keys outlive a test's database (they are cached): unique per run too.
_run = uuid.uuid4().hex[:12]
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

    def make(
        self, path: str, body: Any, *, text: bool = False, status: int = 201
    ) -> dict[str, Any]:
        if text:
            response = self.client.post(
                path, data=body, headers={**self.headers, "Content-Type": "text/plain"}
            )
        else:
            response = self.client.post(path, json=body, headers=self.headers)
        assert response.status_code == status, (path, response.status_code, response.get_data())
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


def _fresh(caller: Caller, label: str, path: str) -> tuple[str, str] | None:
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
    if label == "DELETE /organizations/{organization_id}":
        body = {"legalName": f"fresh {n}", "legalDocument": str(n)}
        return "organization_id", caller.make("/v1/organizations", body)["id"]
    if label == "DELETE /balance-monitors/{id}":
        account = caller.make(
            f"{led}/accounts", {"name": "fresh", "assetCode": "BRL", "alias": f"@fresh{n}"}
        )
        body = {"accountId": account["id"], "measure": "available", "condition": "below"}
        body["threshold"] = {"amount": 0, "scale": 0}
        return "id", caller.make(f"{led}/balance-monitors", body)["id"]
    if label == "DELETE /webhooks/{id}":
        body = {"url": f"https://hooks.example.com/{n}", "eventTypes": ["*"]}
        owner = caller.ledger_url if "/ledgers/{ledger_id}/" in path else caller.org_url
        return "id", caller.make(f"{owner}/webhooks", body)["id"]
    if label == "DELETE /ledgers/{ledger_id}":
        return "ledger_id", caller.make(f"{caller.org_url}/ledgers", {"name": f"fresh {n}"})["id"]
    if label in {
        "POST /transactions/{transaction_id}/commit",
        "POST /transactions/{transaction_id}/cancel",
        "POST /transactions/{transaction_id}/revert",
    }:
        code = "PAYMENT_WITH_FEE" if label.endswith("revert") else "PAYMENT_HELD"
        # A hold with no fee: one source, one destination, so it may be committed in part.
        fee = 1 if label.endswith("revert") else 0
        variables = {"amount": HELD, "fee": fee, "source": "@alice", "destination": "@bob"}
        body = {"transactionTypeCode": code, "variables": variables}
        return "transaction_id", caller.make(f"{led}/transactions", body)["id"]
    if label == "POST /scheduled-postings/{scheduled_id}/cancel":
        body = {
            "transactionTypeCode": "FUND",
            "variables": {"amount": n, "account": "@bob"},
            "scheduledFor": (timezone.now() + dt.timedelta(days=1)).isoformat(),
        }
        return "scheduled_id", caller.make(f"{led}/transactions", body, status=202)["id"]
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


def _expiry(body: dict[str, Any]) -> None:
    """The times a posting names, as a client has them: a posting scheduled for later lies
    ahead, and takes effect then (no ``effectiveAt``); an expiry is for a hold, and lies ahead
    of its moment; a hold's own commit falls between the two."""
    now = timezone.now()
    if body.get("scheduledFor") is not None:
        now += dt.timedelta(days=1)
        body["scheduledFor"] = now.isoformat()
        body.pop("effectiveAt", None)
    hold = body.get("pending") is True
    if hold and "expiresAt" in body:
        body["expiresAt"] = (now + dt.timedelta(days=1)).isoformat()
    else:
        body.pop("expiresAt", None)
    if hold and body.get("commitAt") is not None:
        body["commitAt"] = (now + dt.timedelta(hours=12)).isoformat()
    else:
        body.pop("commitAt", None)


def _effective(body: dict[str, Any], *, ago: dt.timedelta = dt.timedelta(days=1)) -> None:
    """An effective time is one that has passed, and a client names one only when it has one
    (a payment recorded late)."""
    if body.get("effectiveAt") is not None:
        body["effectiveAt"] = (timezone.now() - ago).isoformat()


def _deposit(item: dict[str, Any]) -> dict[str, Any]:
    """A posting of the stored FUND template with its variables, keeping the generated
    options (metadata, description, pending, an expiry); the parent is one the client does not
    have."""
    item.pop("parentTransactionId", None)
    item.pop("rate", None)  # FUND does not convert: a client names no rate for it
    _expiry(item)
    _effective(item)
    amount = next(_serial)
    return {
        **item,
        "transactionTypeCode": "FUND",
        "variables": {"amount": amount, "account": "@bob"},
    }


def _inline_json(body: dict[str, Any]) -> dict[str, Any]:
    """A deposit described as the template's JSON tree, with the generated description,
    metadata and pending kept where they have the tree's shape."""
    amount = {"terms": [{"variable": "amount"}], "scale": 2}
    tree: dict[str, Any] = {
        "chartOfAccountsGroupName": "FUNDING",
        "send": {
            "asset": "BRL",
            "amount": amount,
            "source": [{"account": {"alias": "@external/BRL"}, "asset": "BRL", "amount": amount}],
        },
        "distribute": {"to": [{"account": {"alias": "@bob"}, "asset": "BRL", "amount": amount}]},
        "variables": {"amount": next(_serial)},
    }
    for field in ("description", "pending", "effectiveAt", "scheduledFor", "commitAt"):
        if field in body:
            tree[field] = body[field]
    _expiry(tree)
    _effective(tree)
    if isinstance(body.get("metadata"), dict):
        # Keys of the template's metadata are names of the template language.
        names = {re.sub(r"[^A-Za-z0-9_./-]", "", k): v for k, v in body["metadata"].items()}
        tree["metadata"] = {k: v for k, v in names.items() if k}
    return tree


def _postings(case: Any, label: str) -> None:
    headers = case.headers if case.headers is not None else {}  # a case-insensitive mapping
    for name in ("idempotencyKey", "Idempotency-Key"):
        if name in headers:
            headers[name] = f"fz-{_run}-{next(_serial)}"  # a key per posting, as a client makes one
    body = case.body
    scheduled = isinstance(body, dict) and body.get("scheduledFor") is not None
    if scheduled and isinstance(case.query, dict):
        case.query.pop("dryRun", None)  # a dry run is of a posting made now
    if label == "POST /transactions" and isinstance(body, dict):
        case.body = _deposit(body)
    elif label == "POST /transactions/batch" and isinstance(body, dict):
        items = body.get("transactions")
        if isinstance(items, list):
            body["transactions"] = [_deposit(dict(i) if isinstance(i, dict) else {}) for i in items]
            for item in body["transactions"]:
                if "idempotencyKey" in item:
                    item["idempotencyKey"] = f"fz-{_run}-{next(_serial)}"
    elif label == "POST /transactions/json":
        case.body = _inline_json(body if isinstance(body, dict) else {})
    elif label == "POST /transactions/dsl":
        amount = next(_serial)
        if isinstance(body, dict):
            body.pop("parentTransactionId", None)
            body.pop("rate", None)  # FUND does not convert
            _expiry(body)
            _effective(body)
            body["dsl"] = FUND
            body["variables"] = {"amount": amount, "account": "@bob"}
        else:
            text = FUND.replace("$amount", str(amount)).replace("$account", "@bob")
            case.body = text.encode() if isinstance(body, bytes) else text
    elif label == "POST /transaction-templates":
        code = f"FZ{letters(next(_serial))}"
        text = FUND.replace("(code FUND)", f"(code {code})")
        case.body = text.encode() if isinstance(body, bytes) else text
    elif label == "PUT /transaction-templates/{code}":
        code = (case.path_parameters or {}).get("code", "FUND")
        text = FUND.replace("(code FUND)", f"(code {code})")
        case.body = text.encode() if isinstance(body, bytes) else text


def _without_nul_keys(value: Any) -> Any:
    """The API refuses a JSON body with a NUL character (0047); the schema says so of every
    string value, but OpenAPI 3.0 cannot say it of property names (metadata keys)."""
    if isinstance(value, dict):
        return {k.replace("\x00", ""): _without_nul_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_nul_keys(v) for v in value]
    return value


def know(case: Any, label: str, real: dict[str, Any], caller: Caller) -> None:
    """Rewrite the positive ``case`` of operation ``label`` as a client would send it."""
    if isinstance(case.body, dict):
        case.body = _without_nul_keys(case.body)
    _postings(case, label)
    query = case.query if isinstance(case.query, dict) else None
    for name, value in (query or {}).items():
        # A date the service cannot hold in every time zone (the calendar's first and last
        # days, refused with 0077) is one a client has no reason to ask about.
        if isinstance(value, str) and value[:4] in ("0000", "0001", "9999"):
            query[name] = "2026-01-01" + value[10:]
    if query and "cursor" in query:
        path = case.operation.path.format(**(case.path_parameters or {}))
        cursor = caller.next_cursor(path)
        if cursor is None:
            del query["cursor"]  # a client on the first page sends no cursor
        else:
            query["cursor"] = cursor
    if label == "GET /period-report":
        # A period runs forwards.
        case.query = query = {**(query or {}), "from": "2026-01-01", "to": "2026-12-31"}
    if query and query.get("order") == "effective":
        query.pop("cursor", None)  # a cursor of the statement in the other order is not one
    fresh = _fresh(caller, label, case.operation.path)
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
        elif "parentAccountId" in body:
            body["parentAccountId"] = None  # a move to the top; any id the fuzzer makes is 422
        if "alias" in body:
            body["alias"] = f"@fz{next(_serial)}"
        for field, resource in (("portfolioId", "portfolio"), ("productId", "product")):
            if body.get(field) is not None:
                body[field] = real[resource]
    if label == "POST /balance-monitors":
        # An account of the ledger, one of its own (an account has at most ten monitors).
        account = {"name": "watched", "assetCode": "BRL", "alias": f"@fz{next(_serial)}"}
        body["accountId"] = caller.make(f"{caller.ledger_url}/accounts", account)["id"]
        if "assetCode" in body:
            # An account monitor watches its account's own asset; a tree monitor, an
            # instrument of the ledger.
            body["assetCode"] = "BRL"
    if label in {"POST /balance-monitors", "PATCH /balance-monitors/{id}"}:
        threshold = body.get("threshold")
        if isinstance(threshold, dict) and isinstance(threshold.get("amount"), int):
            # What is on hold, and the overdraft used, are never negative.
            threshold["amount"] = abs(threshold["amount"])
    if label in {"POST /asset-rates", "POST /instrument-rates"}:
        base, counter = ("baseAssetCode", "counterAssetCode")
        if label == "POST /instrument-rates":
            base, counter = ("baseInstrumentCode", "counterInstrumentCode")
        body[base], body[counter] = "XAU", "BRL"
    if "rates" in label and label.startswith(("POST", "PATCH")):
        body["source"] = f"source {next(_serial)}"  # one active rate per pair and source
    if label in {"POST /webhooks", "PATCH /webhooks/{id}"} and "url" in body:
        body["url"] = f"https://hooks.example.com/{next(_serial)}"  # a receiver the client runs
    if label == "POST /transactions/{transaction_id}/commit":
        # A partial commit settles part of what is held, at the hold's scale.
        body.pop("scale", None)
        if "amount" in body:
            body["amount"] = min(max(int(body["amount"]), 1), HELD)
    if label.startswith("POST /transactions/{transaction_id}/"):
        # The transaction acted on was posted a moment ago: its commit, cancel or revert takes
        # effect from then on.
        _effective(body, ago=dt.timedelta(0))
    if label in {"POST /ledgers", "PATCH /ledgers/{ledger_id}"}:
        # A time zone by its name, and books closed through a day that is over.
        if "timeZone" in body:
            body["timeZone"] = "America/Sao_Paulo"
        if body.get("closedThrough") is not None:
            body["closedThrough"] = (timezone.now() - dt.timedelta(days=30)).date().isoformat()
    if label == "POST /organizations" and body.get("parentOrganizationId") is not None:
        body["parentOrganizationId"] = real["organization"]
    if label == "PATCH /organizations/{organization_id}":
        # The organization under test is a root: any other parent is a descendant or unknown.
        for field in ("parentOrganizationId", "parentOganizationId"):
            if field in body:
                body[field] = None
    if label == "POST /instruments" and isinstance(body.get("code"), str):
        if body.get("type") == "currency":
            body["code"] = next(_currencies, body["code"])  # once all are used, a duplicate
        else:
            body["code"] = body["code"][:80] + "Z" + letters(next(_serial))  # <= 91
    if label == "POST /charts":
        if body.get("type") != "totalAmountByAsset":  # the other charts need both dates
            body.setdefault("startDate", "2026-01-01")
            body["startDate"] = body["startDate"] or "2026-01-01"
            body["endDate"] = body.get("endDate") or "2026-12-31"
        dates = [body.get("startDate"), body.get("endDate")]
        if all(isinstance(d, str) for d in dates) and dates[0] > dates[1]:
            body["startDate"], body["endDate"] = dates[1], dates[0]
