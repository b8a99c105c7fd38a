"""The error envelope for failures that no endpoint raises itself."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.test import override_settings
from django.urls import path
from rest_framework.views import APIView

from ledgerproject.errors import ErrorCode
from tests.conftest import assert_error


class Boom(APIView):
    def get(self, request):
        raise RuntimeError("secret stack detail")


urlpatterns = [path("v1/boom", Boom.as_view())]


def test_it_answers_unknown_urls_with_0007(api):
    assert_error(api.get("/v1/nothing-here"), 404, "0007")
    assert_error(api.get("/v1"), 404, "0007")


def test_it_answers_a_malformed_uuid_in_the_path_with_0007(api):
    assert_error(api.get("/v1/organizations/not-a-uuid"), 404, "0007")
    assert_error(api.get("/v1/organizations/not-a-uuid/ledgers"), 404, "0007")


def test_it_answers_wrong_methods_with_0026(api, organization):
    assert_error(api.put(f"/v1/organizations/{organization['id']}", {}), 405, "0026")


def test_it_answers_malformed_json_with_0047(api):
    response = api.client.post(
        "/v1/organizations", data="{not json", content_type="application/json"
    )
    assert_error(response, 400, "0047")


def test_it_answers_a_non_object_body_with_0047(api):
    assert_error(api.post("/v1/organizations", [1, 2]), 400, "0047")


def test_it_answers_unsupported_media_types_with_415_0047(api):
    response = api.client.post("/v1/organizations", data="a=b", content_type="text/plain")
    assert_error(response, 415, "0047")


@override_settings(ROOT_URLCONF=__name__, DEBUG=False)
def test_it_answers_crashes_with_500_0046_and_no_stack_trace(api, caplog):
    response = api.get("/v1/boom")
    body = assert_error(response, 500, "0046")
    assert "secret" not in response.content.decode()
    assert "RuntimeError" not in body["description"]
    assert any("Unhandled error" in r.message for r in caplog.records)


@pytest.mark.parametrize("path", ["/health"])
def test_it_answers_health_without_a_token(anon, db, path):
    response = anon.get(path)
    assert response.status_code == 200
    assert response.json()["status"] == "ok"


def test_every_code_of_the_catalogue_is_in_the_api_docs():
    text = (Path(__file__).resolve().parents[2] / "docs" / "API.md").read_text()
    documented = set(re.findall(r"^\| `(\d{4})` \| (\d{3}) \| (.+?) \|$", text, re.M))
    assert {(c.code, str(c.http_status), c.title) for c in ErrorCode} <= documented
