"""Small helpers for the back-office tests."""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.contrib.messages import get_messages
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from organizations.models import Ledger


def ledger_of(book) -> Ledger:
    return Ledger.objects.get(pk=book.url.rsplit("/", 1)[-1])


def messages_of(response) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


def count_queries(client: Client, url: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    return len(captured.captured_queries)


def staff_client(*perms: str, username: str = "clerk") -> Client:
    """A logged-in staff user (not a superuser) with exactly these ``app.codename`` perms."""
    user = get_user_model().objects.create_user(username, password="x", is_staff=True)
    for perm in perms:
        app_label, codename = perm.split(".")
        user.user_permissions.add(
            Permission.objects.get(content_type__app_label=app_label, codename=codename)
        )
    client = Client()
    client.force_login(user)
    return client


def run_action(client: Client, model: str, action: str, *pks, **extra):
    return client.post(
        f"/admin/{model}/",
        {"action": action, "_selected_action": [str(pk) for pk in pks], **extra},
        follow=True,
    )


def change_form(client: Client, model: str, obj: Any) -> tuple[str, dict[str, Any], Any]:
    """The admin change form of ``obj``: its URL, the data it would post unchanged (JSON fields
    as text) and the form itself."""
    url = f"/admin/{model}/{obj.pk}/change/"
    page = client.get(url)
    assert page.status_code == 200, page.status_code
    form = page.context["adminform"].form
    data = {}
    for name, field in form.fields.items():
        value = form.initial.get(name, field.initial)
        if isinstance(value, dict):
            value = json.dumps(value)
        data[name] = "" if value is None else value
    return url, data, form


def save_confirmed(client: Client, url: str, data: dict[str, Any]) -> Any:
    """POST a change form whose change needs confirming (``service_form``): the first save
    answers what the change will do and moves nothing; the second, with the page's ``confirm``,
    saves. A form refused before the confirmation (no reason, a wrong value) is answered
    as it is."""
    first = client.post(url, data)
    if first.status_code != 200 or "save again to confirm" not in first.content.decode():
        return first
    return client.post(url, {**data, "confirm": first.context["adminform"].form.data["confirm"]})
