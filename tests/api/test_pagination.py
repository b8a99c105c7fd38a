"""Keyset pagination: limit, cursor, Link header, sort order."""

from __future__ import annotations

import re

from tests.conftest import assert_error


def _next(response):
    link = response.get("Link")
    if not link:
        return None
    match = re.match(r'<(?P<url>[^>]+)>; rel="next"', link)
    assert match, link
    return match["url"].replace("http://testserver", "")


def test_it_walks_every_page_once_in_order(api, organization):
    base = f"/v1/organizations/{organization['id']}/ledgers"
    names = [f"L{i:02d}" for i in range(7)]
    for name in names:
        api.post(base, {"name": name})
    seen, url = [], f"{base}?limit=3"
    while url:
        response = api.get(url)
        assert response.status_code == 200
        page = response.json()
        assert len(page) <= 3
        seen += [ledger["name"] for ledger in page]
        url = _next(response)
    assert seen == names


def test_it_sorts_descending(api, organization):
    base = f"/v1/organizations/{organization['id']}/ledgers"
    for name in ["a", "b", "c"]:
        api.post(base, {"name": name})
    first = api.get(base, {"sort_order": "desc", "limit": 2})
    assert [x["name"] for x in first.json()] == ["c", "b"]
    assert [x["name"] for x in api.get(_next(first)).json()] == ["a"]


def test_it_refuses_bad_pagination_parameters(api, organization):
    base = f"/v1/organizations/{organization['id']}/ledgers"
    assert_error(api.get(base, {"limit": 1001}), 400, "0080")
    assert_error(api.get(base, {"limit": "x"}), 400, "0082")
    assert_error(api.get(base, {"limit": 0}), 400, "0082")
    assert_error(api.get(base, {"cursor": "garbage!"}), 400, "0082")
    assert_error(api.get(base, {"sort_order": "up"}), 400, "0082")
    assert_error(api.get(base, {"deleted": "maybe"}), 400, "0082")
