"""Every admin action declares its permission, and a view-only user can run none of them.

Before: ``ApiTokenAdmin.revoke`` declared none, so a staff user allowed only to view tokens
could revoke every API token. An action posted with a malformed id answered 500."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import RequestFactory

from ledgerproject.admin_base import LedgerModelAdmin, actions_without_permissions
from organizations.models import ApiToken
from tests.admin.helpers import messages_of, staff_client
from tests.conftest import make_token


def test_every_registered_action_declares_its_permission():
    assert actions_without_permissions(admin.site) == []


def test_every_registered_admin_has_the_shared_base():
    assert [
        model._meta.label
        for model, model_admin in _registered()
        if not isinstance(model_admin, LedgerModelAdmin)
    ] == []


def _registered():
    return [
        (model, admin.site.get_model_admin(model))
        for model in apps.get_models()
        if admin.site.is_registered(model)
    ]


def _view_everything() -> list[str]:
    return [
        f"{p.content_type.app_label}.{p.codename}"
        for p in Permission.objects.filter(codename__startswith="view_")
    ]


@pytest.mark.django_db
def test_a_view_only_user_is_offered_no_action_anywhere():
    staff_client(*_view_everything())
    request = RequestFactory().get("/admin/")
    request.user = get_user_model().objects.get(username="clerk")
    offered = {
        model._meta.label: sorted(model_admin.get_actions(request))
        for model, model_admin in _registered()
    }
    assert {label: names for label, names in offered.items() if names} == {}


def test_a_view_only_user_cannot_revoke_a_token_by_posting_the_action(db):
    make_token("victim")
    client = staff_client(*_view_everything())
    token = ApiToken.objects.get(name="victim")
    client.post(
        "/admin/organizations/apitoken/",
        {"action": "revoke", "_selected_action": [str(token.pk)]},
    )
    token.refresh_from_db()
    assert token.revoked_at is None


def test_an_action_with_a_malformed_id_is_refused_with_a_message(db):
    make_token("victim")
    client = staff_client("organizations.view_apitoken", "organizations.change_apitoken")
    response = client.post(
        "/admin/organizations/apitoken/",
        {"action": "revoke", "_selected_action": ["not-an-id"]},
    )
    assert response.status_code == 302
    assert "not valid" in " ".join(messages_of(response))
    assert ApiToken.objects.get(name="victim").revoked_at is None
