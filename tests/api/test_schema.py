"""The OpenAPI schema and docs page are served without a token and work offline."""

from __future__ import annotations

import json


def test_it_serves_the_openapi_schema(anon, db):
    response = anon.get("/v1/openapi.json")
    assert response.status_code == 200
    schema = json.loads(response.content)
    assert schema["openapi"].startswith("3.")
    assert "/v1/organizations" in schema["paths"]
    post = schema["paths"]["/v1/organizations"]["post"]
    assert "422" in post["responses"] and "201" in post["responses"]
    assert "Error" in schema["components"]["schemas"]


def test_it_serves_the_docs_page_from_local_files(anon, db):
    response = anon.get("/v1/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "swagger-ui" in html
    assert "cdn." not in html and "unpkg" not in html and "jsdelivr" not in html
