"""The five transaction-template endpoints, with the documented content types and errors."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Api, assert_error, make_token
from tests.transactions.conftest import PAYMENT

SIMPLE = """(transaction-template v1
  (chart-of-accounts-group-name G)
  (code SIMPLE)
  (send BRL $a|2 (source (from @external/BRL :amount BRL $a|2)))
  (distribute (to $to :amount BRL $a|2)))"""


@pytest.fixture
def url(api, ledger_url):
    response = api.post(
        f"{ledger_url}/instruments", {"name": "Real", "type": "currency", "code": "BRL"}
    )
    assert response.status_code == 201, response.content
    return ledger_url


def _post(api, url, text, content_type="text/plain"):
    data = text.encode() if isinstance(text, str) else text
    return api.client.generic(
        "POST", f"{url}/transaction-templates", data=data, content_type=content_type
    )


def test_it_accepts_the_specifications_example_as_written(api, url):
    response = _post(api, url, PAYMENT)
    assert response.status_code == 201
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert response.content.decode() == PAYMENT


@pytest.mark.parametrize("content_type", ["text/plain", "application/octet-stream", ""])
def test_it_reads_the_body_whatever_the_content_type(api, url, content_type):
    assert _post(api, url, SIMPLE, content_type).status_code == 201


def test_it_retrieves_by_code_on_both_paths(api, url):
    _post(api, url, SIMPLE)
    for path in ("transaction-types", "transaction-templates"):
        response = api.get(f"{url}/{path}/SIMPLE")
        assert response.status_code == 200
        assert response.content.decode() == SIMPLE
        assert response["Content-Type"].startswith("text/plain")
    assert_error(api.get(f"{url}/transaction-types/NOPE"), 404, "0007")


def test_it_lists_templates_as_text_or_json(api, url):
    _post(api, url, SIMPLE)
    _post(api, url, PAYMENT)
    text = api.get(f"{url}/transaction-templates").content.decode()
    assert text == f"({SIMPLE}, {PAYMENT})"
    as_json = api.get(f"{url}/transaction-templates", HTTP_ACCEPT="application/json").json()
    assert [t["code"] for t in as_json] == ["SIMPLE", "PAYMENT_WITH_FEE"]
    assert as_json[1]["chartOfAccountsGroupName"] == "PAG_CONTAS_CODE_1"
    assert as_json[1]["pending"] is False and as_json[1]["text"] == PAYMENT
    assert set(as_json[0]) == {
        "id",
        "code",
        "description",
        "pending",
        "chartOfAccountsGroupName",
        "text",
        "createdAt",
        "updatedAt",
    }
    assert api.get(f"{url}/transaction-templates").status_code == 200


def test_it_refuses_a_duplicate_code(api, url):
    _post(api, url, SIMPLE)
    assert_error(_post(api, url, SIMPLE), 409, "0027")


def test_it_refuses_empty_and_broken_text_with_a_position(api, url):
    assert_error(_post(api, url, ""), 400, "0049")
    assert_error(_post(api, url, "  \n ; only a comment\n"), 400, "0049")
    body = assert_error(
        _post(api, url, SIMPLE.replace("(code SIMPLE)", "(code SIMPLE")), 400, "0017"
    )
    assert body["description"].startswith("line ")
    body = assert_error(_post(api, url, SIMPLE.replace("$a|2)))\n", "$a|3)))\n", 1)), 400, "0017")
    assert "line 4" in body["description"]
    assert_error(_post(api, url, b"\xff\xfe"), 400, "0047")


def test_it_refuses_an_asset_that_is_not_an_instrument(api, url):
    body = assert_error(_post(api, url, SIMPLE.replace("BRL", "USD")), 400, "0017")
    assert "USD" in body["description"] and "line 4" in body["description"]


def test_it_replaces_a_template(api, url):
    _post(api, url, SIMPLE)
    new = SIMPLE.replace("(code SIMPLE)", '(code SIMPLE)\n  (description "v2")')
    response = api.client.put(
        f"{url}/transaction-templates/SIMPLE", data=new, content_type="text/plain"
    )
    assert response.status_code == 200 and response.content.decode() == new
    assert api.get(f"{url}/transaction-types/SIMPLE").content.decode() == new
    other = SIMPLE.replace("(code SIMPLE)", "(code OTHER)")
    assert_error(
        api.client.put(
            f"{url}/transaction-templates/SIMPLE", data=other, content_type="text/plain"
        ),
        400,
        "0006",
    )
    assert_error(
        api.client.put(f"{url}/transaction-templates/NOPE", data=SIMPLE, content_type="text/plain"),
        404,
        "0007",
    )


def test_it_deletes_and_frees_the_code(api, url):
    _post(api, url, SIMPLE)
    assert api.delete(f"{url}/transaction-templates/SIMPLE").status_code == 204
    assert_error(api.delete(f"{url}/transaction-templates/SIMPLE"), 400, "0013")
    assert_error(api.get(f"{url}/transaction-types/SIMPLE"), 404, "0007")
    assert_error(api.delete(f"{url}/transaction-templates/NEVER"), 404, "0007")
    assert _post(api, url, SIMPLE).status_code == 201


def test_it_keeps_templates_inside_the_tenant(api, url, organization):
    _post(api, url, SIMPLE)
    other = api.post("/v1/organizations", {"legalName": "O", "legalDocument": "2"}).json()
    outsider = Api(make_token("outsider", organization_ids=[other["id"]]))
    assert_error(outsider.get(f"{url}/transaction-types/SIMPLE"), 404, "0007")
    assert_error(outsider.get(f"{url}/transaction-templates"), 404, "0007")
    reader = Api(make_token("reader", read_only=True))
    assert_error(
        reader.client.post(f"{url}/transaction-templates", data=SIMPLE, content_type="text/plain"),
        403,
        "0043",
    )


def test_errors_stay_json_when_the_client_asks_for_text(api, url):
    response = api.get(f"{url}/transaction-types/NOPE", HTTP_ACCEPT="text/plain")
    assert response.status_code == 404
    assert json.loads(response.content)["code"] == "0007"
