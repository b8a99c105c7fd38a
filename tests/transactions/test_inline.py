"""Inline postings: POST .../transactions/dsl (template-language text, raw or wrapped in JSON
with variables) and POST .../transactions/json (the template's tree as JSON). Both compile
through the parser/checks/planner of stored templates and post through the one engine."""

from __future__ import annotations

import copy
import datetime as dt

import pytest
from django.utils import timezone

from tests.conftest import assert_error
from transactions.models import Transaction

TEXT = """
(transaction-template v1
  (chart-of-accounts-group-name PIX)
  (code PIX_OUT)
  (description "Inline payment")
  (metadata (channel api))
  (send BRL 150|2
    (source (from @alice :amount BRL 150|2 (chart-of-accounts PIX_DEBIT))))
  (distribute
    (to @bob :amount BRL 100|2 (description "to bob"))
    (distribute :remaining (to @fees/platform :remaining))))
"""

WITH_VARIABLES = """
(transaction-template v1
  (chart-of-accounts-group-name PIX)
  (code PIX_OUT)
  (send BRL $amount|2 (source (from $source :amount BRL $amount|2)))
  (distribute (to $destination :amount BRL $amount|2 (description "pay $amount"))))
"""

JSON = {
    "chartOfAccountsGroupName": "PIX",
    "description": "Inline payment",
    "metadata": {"channel": "api"},
    "send": {
        "asset": "BRL",
        "amount": {"terms": [{"variable": "amount"}, {"literal": 50}], "scale": 2},
        "source": [
            {
                "account": {"variable": "source"},
                "asset": "BRL",
                "amount": {"terms": [{"variable": "amount"}, {"literal": 50}], "scale": 2},
                "chartOfAccounts": "PIX_DEBIT",
            }
        ],
    },
    "distribute": {
        "to": [
            {
                "account": {"alias": "@bob"},
                "asset": "BRL",
                "amount": {"terms": [{"variable": "amount"}], "scale": 2},
                "description": "to bob $amount",
            }
        ],
        "remaining": {"account": {"alias": "@fees/platform"}},
    },
    "variables": {"amount": 100, "source": "@alice"},
}


@pytest.fixture
def funded(book):
    book.fund("@alice", 1000)
    return book


def dsl(book, text, **extra):
    return book.api.post(f"{book.url}/transactions/dsl", text, content_type="text/plain", **extra)


def as_json(book, body, **extra):
    return book.api.post(f"{book.url}/transactions/json", body, **extra)


def test_it_posts_template_text(funded):
    response = dsl(funded, TEXT)
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["type"], body["inline"], body["status"]) == (None, True, "SENT")
    assert body["amount"] == {"amount": 150, "scale": 2}
    assert body["description"] == "Inline payment"
    assert body["metadata"] == {"channel": "api"}
    assert body["chartOfAccountsGroupName"] == "PIX"
    assert (funded.available("@alice"), funded.available("@bob")) == (850, 100)
    assert funded.available("@fees/platform") == 50
    stored = Transaction.objects.get(pk=body["id"])
    assert stored.template_id is None and stored.type == ""
    read = funded.api.get(f"{funded.url}/transactions/{body['id']}").json()
    assert (read["type"], read["inline"]) == (None, True)


def test_a_template_posting_says_it_is_not_inline(funded):
    body = funded.pay(10, 1).json()
    assert (body["type"], body["inline"]) == ("PAYMENT_WITH_FEE", False)


def test_it_posts_template_text_with_variables_in_a_json_wrapper(funded):
    body = {
        "dsl": WITH_VARIABLES,
        "variables": {"amount": 40, "source": "@alice", "destination": "@bob"},
        "metadata": {"ref": "r1"},
        "description": "overridden",
    }
    response = funded.api.post(f"{funded.url}/transactions/dsl", body)
    assert response.status_code == 201, response.content
    made = response.json()
    assert made["description"] == "overridden" and made["metadata"] == {"ref": "r1"}
    assert [op["description"] for op in made["operations"]][-1] == "pay 0.40 BRL"
    assert funded.available("@bob") == 40


def test_raw_text_with_variables_is_missing_them(funded):
    assert_error(dsl(funded, WITH_VARIABLES), 400, "0009")


def test_text_errors_name_the_line_and_column(funded):
    broken = TEXT.replace("(send BRL 150|2", "(send BRL 150|2 )")
    body = assert_error(dsl(funded, broken), 400, "0017")
    assert "line 7, column" in body["description"]
    assert_error(dsl(funded, "  "), 400, "0049")
    assert_error(dsl(funded, TEXT.replace("BRL 100|2", "BRL 100|3")), 400, "0017")


def test_it_posts_json(funded):
    response = as_json(funded, JSON)
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["type"], body["inline"]) == (None, True)
    assert body["amount"] == {"amount": 150, "scale": 2}
    assert funded.available("@alice") == 850
    assert funded.available("@bob") == 100
    assert funded.available("@fees/platform") == 50
    assert body["operations"][1]["description"] == "to bob 1.00 BRL"


def test_json_and_text_make_the_same_tree(funded):
    """The JSON maps one to one onto the tree the text parses to."""
    from templates_dsl.compile import compile_template
    from templates_dsl.inline import template_from_json

    text = WITH_VARIABLES.replace('(description "pay $amount")', "")
    tree = {
        "chartOfAccountsGroupName": "PIX",
        "code": "PIX_OUT",
        "send": {
            "asset": "BRL",
            "amount": {"terms": [{"variable": "amount"}], "scale": 2},
            "source": [
                {
                    "account": {"variable": "source"},
                    "asset": "BRL",
                    "amount": {"terms": [{"variable": "amount"}], "scale": 2},
                }
            ],
        },
        "distribute": {
            "to": [
                {
                    "account": {"variable": "destination"},
                    "asset": "BRL",
                    "amount": {"terms": [{"variable": "$amount"}], "scale": 2},
                }
            ]
        },
    }
    assert template_from_json(tree) == compile_template(text)


@pytest.mark.parametrize(
    "change, status, code, path",
    [
        (lambda b: b["send"]["amount"].update(scale=3), 400, "0017", "$.send.source[0].amount"),
        (
            lambda b: b["distribute"]["to"][0].update(asset="USD"),
            400,
            "0017",
            "$.distribute.to[0].asset",
        ),
        (lambda b: b["send"].pop("source"), 400, "0009", "$.send.source"),
        (lambda b: b["send"].update(extra=1), 400, "0053", "$.send.extra"),
        (
            lambda b: b["send"]["source"][0].update(account={"alias": "alice"}),
            400,
            "0017",
            "$.send.source[0].account",
        ),
        (
            lambda b: b["distribute"]["to"][0].update(description="$nope"),
            400,
            "0017",
            "$.distribute.to[0].description",
        ),
        (lambda b: b.update(pending="yes"), 400, "0047", "$.pending"),
    ],
)
def test_json_errors_name_the_json_path(funded, change, status, code, path):
    body = copy.deepcopy(JSON)
    change(body)
    error = assert_error(as_json(funded, body), status, code)
    assert any(key.startswith(path) for key in error["fields"]), error
    assert error["description"].startswith(path[:8])


def test_inline_refusals_are_the_engines(funded):
    body = {**copy.deepcopy(JSON), "variables": {"amount": 10**6, "source": "@alice"}}
    assert_error(as_json(funded, body), 422, "0018")
    body["variables"] = {"amount": 1, "source": "@nobody"}
    assert_error(as_json(funded, body), 422, "0085")
    assert funded.available("@alice") == 1000


def test_inline_pending_then_commit(funded):
    response = dsl(funded, TEXT.replace("(metadata (channel api))", "(pending true)"))
    assert response.status_code == 201, response.content
    tx = response.json()
    assert tx["status"] == "PRE_APPROVED"
    assert funded.balance("@alice") == {"available": 850, "onHold": 150, "scale": 2}
    committed = funded.api.post(f"{funded.url}/transactions/{tx['id']}/commit", {})
    assert committed.status_code == 200, committed.content
    assert committed.json()["inline"] is True
    assert funded.available("@bob") == 100


def test_inline_revert_stays_inline(funded):
    tx = as_json(funded, JSON).json()
    reverted = funded.api.post(f"{funded.url}/transactions/{tx['id']}/revert", {})
    assert reverted.status_code == 201, reverted.content
    assert (reverted.json()["type"], reverted.json()["inline"]) == (None, True)
    assert funded.available("@alice") == 1000


def test_pending_option_of_the_wrapper(funded):
    body = {"dsl": TEXT, "pending": True}
    response = funded.api.post(f"{funded.url}/transactions/dsl", body)
    assert response.json()["status"] == "PRE_APPROVED"


def test_dry_run_writes_nothing(funded):
    before = Transaction.objects.count()
    for response in (
        funded.api.post(
            f"{funded.url}/transactions/dsl?dryRun=true", TEXT, content_type="text/plain"
        ),
        funded.api.post(f"{funded.url}/transactions/json?dryRun=true", JSON),
    ):
        assert response.status_code == 200, response.content
        assert response.json()["inline"] is True
    assert Transaction.objects.count() == before
    assert funded.available("@alice") == 1000


def test_idempotency_keys_replay(funded):
    first = as_json(funded, JSON, HTTP_IDEMPOTENCY_KEY="k-1")
    again = as_json(funded, JSON, HTTP_IDEMPOTENCY_KEY="k-1")
    assert first.status_code == again.status_code == 201
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json()["id"] == first.json()["id"]
    other = {**JSON, "description": "different"}
    assert_error(as_json(funded, other, HTTP_IDEMPOTENCY_KEY="k-1"), 422, "0084")
    text_first = dsl(funded, TEXT, HTTP_IDEMPOTENCY_KEY="k-2")
    text_again = dsl(funded, TEXT, HTTP_IDEMPOTENCY_KEY="k-2")
    assert text_again.json()["id"] == text_first.json()["id"]
    assert funded.available("@alice") == 1000 - 150 - 150


def test_tolerance_detects_a_duplicate(funded):
    first = dsl(funded, TEXT, HTTP_TOLERANCE="60")
    second = dsl(funded, TEXT, HTTP_TOLERANCE="60")
    assert second.headers.get("Idempotent-Replayed") == "true"
    assert second.json()["id"] == first.json()["id"]
    assert funded.available("@alice") == 850


def test_inline_holds_take_an_expiry_on_both_endpoints(funded):
    """``expiresAt`` is a posting option like ``pending``: the JSON wrapper of the text and the
    JSON tree both take it, and a commit past it is refused like any expired hold's."""
    soon = (timezone.now() + dt.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S+0000")
    wrapped = {"dsl": TEXT, "pending": True, "expiresAt": soon}
    response = funded.api.post(f"{funded.url}/transactions/dsl", wrapped)
    assert response.status_code == 201, response.content
    assert (response.json()["status"], response.json()["expiresAt"]) == ("PRE_APPROVED", soon)

    tree = {**JSON, "pending": True, "expiresAt": soon}
    response = as_json(funded, tree)
    assert response.status_code == 201, response.content
    tx = response.json()
    assert tx["expiresAt"] == soon
    Transaction.objects.filter(pk=tx["id"]).update(expires_at=timezone.now() - dt.timedelta(1))
    late = funded.api.post(f"{funded.url}/transactions/{tx['id']}/commit", {})
    assert_error(late, 422, "0099")
