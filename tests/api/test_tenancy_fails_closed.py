"""Tenancy fails closed. Every /v1 URL pattern is walked: each resolves to a scoped view whose
path names the organization or ledger it is scoped to (or that declares it filters by the
token's reach itself), a view that forgets raises instead of seeing every tenant, and every
object a path names by id is fetched through the one scoped getter."""

from __future__ import annotations

import re
import uuid

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.test import APIRequestFactory

from ledgerproject.api.views import ScopedAPIView
from tests.conftest import assert_error

PUBLIC = {"SpectacularJSONAPIView", "SpectacularSwaggerView", "UnknownEndpointView"}
PRINCIPAL_SCOPED = {"OrganizationCollection"}
# Paths whose object is found otherwise, by design: a transaction locked for an action (the
# lock is the lookup, scoped to the ledger), a template by its code and an account by its alias
# in the ledger (tests/transactions/test_balances_and_alias.py).
OTHER_LOOKUPS = (
    "/commit", "/revert", "/cancel", "transaction-types/", "transaction-templates/",
    "accounts/alias/",
)  # fmt: skip


KWARG = re.compile(r"<(?:\w+:)?(\w+)>")


def _patterns(resolver: URLResolver | None = None, prefix: str = ""):
    for entry in (resolver or get_resolver()).url_patterns:
        if isinstance(entry, URLResolver):
            yield from _patterns(entry, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            view = getattr(entry.callback, "view_class", None) or getattr(
                entry.callback, "cls", None
            )
            yield prefix + str(entry.pattern), view


def _api_patterns():
    return [(p, v) for p, v in _patterns() if p.startswith("v1") or p.startswith("^v1")]


def test_every_api_pattern_resolves_to_a_scoped_view():
    patterns = _api_patterns()
    assert len(patterns) > 30
    for path, view in patterns:
        assert view is not None, path
        if view.__name__ in PUBLIC:
            continue
        assert issubclass(view, ScopedAPIView), path
        named = {"organization_id", "ledger_id"} & set(KWARG.findall(path))
        declared = view.principal_scoped
        assert named or declared, f"{path}: {view.__name__} is scoped to nothing"
        assert not (declared and view.__name__ not in PRINCIPAL_SCOPED), path


class Forgetful(ScopedAPIView):
    def get(self, request, *args, **kwargs):
        raise AssertionError("never reached")


def test_a_view_that_declares_no_scope_raises(api):
    request = APIRequestFactory().get("/v1/forgetful", HTTP_AUTHORIZATION=api.client._credentials[
        "HTTP_AUTHORIZATION"])  # fmt: skip
    view = Forgetful()
    view.setup(request)
    with pytest.raises(ImproperlyConfigured):
        view.initial(view.initialize_request(request))
    with pytest.raises(ImproperlyConfigured):
        Forgetful().scope_filter()


def test_every_object_named_by_id_is_fetched_through_the_scoped_getter(
    api, ledger_url, monkeypatch
):
    calls: list[str] = []
    original = ScopedAPIView.get_scoped

    def spy(self, queryset, raw_id, noun):
        calls.append(noun)
        return original(self, queryset, raw_id, noun)

    monkeypatch.setattr(ScopedAPIView, "get_scoped", spy)
    org, ledger = ledger_url.split("/")[3], ledger_url.split("/")[5]
    values = {"organization_id": org, "ledger_id": ledger}
    checked = 0
    for path, _ in _api_patterns():
        ids = set(KWARG.findall(path)) - {"organization_id", "ledger_id"}
        if not ids or any(marker in path for marker in OTHER_LOOKUPS):
            continue
        url = "/" + KWARG.sub(lambda m: values.get(m.group(1)) or str(uuid.uuid4()), path)
        calls.clear()
        assert_error(api.get(url), 404, "0007")
        assert calls, f"{path} did not fetch through get_scoped"
        checked += 1
    assert checked >= 8
