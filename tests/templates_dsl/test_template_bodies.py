"""A template's text in JSON, a JSON string or ``{"dsl": "<text>"}``, wherever template text is
taken (stored templates' POST and PUT, ``POST .../transactions/dsl``): the body a generated
client sends, since neither openapi-python-client nor openapi-fetch sends a ``text/plain`` body
as it is."""

from __future__ import annotations

import json

import pytest

from tests.conftest import assert_error
from tests.transactions.conftest import FUND, Book, make_book

SIMPLE = FUND.replace("(code FUND)", "(code SIMPLE)")


@pytest.fixture
def book(api, ledger_url) -> Book:
    return make_book(api, ledger_url)


def test_it_stores_a_template_sent_as_json(book):
    url = f"{book.url}/transaction-templates"
    response = book.api.post(url, {"dsl": SIMPLE})
    assert response.status_code == 201, response.content
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert response.content.decode() == SIMPLE
    replaced = SIMPLE.replace('"Deposit"', '"Top-up"')
    put = book.api.put(f"{url}/SIMPLE", {"dsl": replaced})
    assert put.status_code == 200, put.content
    assert book.api.get(f"{url}/SIMPLE").content.decode() == replaced


def test_it_stores_a_template_sent_as_a_json_string(book):
    """What openapi-fetch sends for a string body by default (JSON.stringify), and
    openapi-python-client for ``body=text``."""
    url = f"{book.url}/transaction-templates"
    response = book.api.post(url, json.dumps(SIMPLE), content_type="application/json")
    assert response.status_code == 201, response.content
    assert response.content.decode() == SIMPLE
    put = book.api.put(f"{url}/SIMPLE", json.dumps(SIMPLE + ";"), content_type="application/json")
    assert (put.status_code, put.content.decode()) == (200, SIMPLE + ";")
    assert_error(book.api.post(url, '"  "', content_type="application/json"), 400, "0049")
    assert_error(book.api.post(url, '"\\u0000"', content_type="application/json"), 400, "0047")


def test_transactions_dsl_takes_the_text_as_a_json_string_too(book):
    text = FUND.replace("$amount", "5").replace("$account", "@bob")
    url = f"{book.url}/transactions/dsl"
    response = book.api.post(url, json.dumps(text), content_type="application/json")
    assert response.status_code == 201, response.content
    assert (response.json()["inline"], book.available("@bob")) == (True, 5)
    assert_error(book.api.post(url, json.dumps(FUND), content_type="application/json"), 400, "0009")
    assert_error(book.api.post(url, "[]", content_type="application/json"), 400, "0047")


def test_the_json_form_is_refused_as_json_bodies_are(book):
    url = f"{book.url}/transaction-templates"
    assert_error(book.api.post(url, {"dsl": "   "}), 400, "0049")
    assert_error(book.api.post(url, {"dsl": ""}), 400, "0047")  # as transactions/dsl's
    assert_error(book.api.post(url, {"text": SIMPLE}), 400, "0053")
    assert_error(book.api.post(url, {}), 400, "0009")
    assert_error(book.api.post(url, {"dsl": ["("]}), 400, "0047")
    assert_error(book.api.post(url, '{"dsl": ', content_type="application/json"), 400, "0047")
    broken = assert_error(book.api.post(url, {"dsl": "(transaction-template v2)"}), 400, "0017")
    assert broken["description"].startswith("line 1, column")


def test_text_sent_as_json_is_still_text(book):
    """Before the JSON form, any Content-Type carried the text; a body that is not a JSON
    object still does (template text never starts with ``{``)."""
    url = f"{book.url}/transaction-templates"
    response = book.api.post(url, SIMPLE, content_type="application/json")
    assert response.status_code == 201, response.content


def test_the_json_form_is_bounded_like_the_text(book, monkeypatch):
    from templates_dsl import limits

    monkeypatch.setattr(limits, "MAX_TEMPLATE_BYTES", len(SIMPLE.encode()))
    url = f"{book.url}/transaction-templates"
    as_json = book.api.post(url, {"dsl": SIMPLE + ";"})
    as_text = book.api.post(url, SIMPLE + ";", content_type="text/plain")
    assert (as_json.status_code, as_json.json()) == (413, as_text.json())
    assert book.api.post(url, {"dsl": SIMPLE}).status_code == 201
