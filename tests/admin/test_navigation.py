"""The back office in its own words: the index and the sidebar group the lists by task
(``ledgerproject.admin_site.TASKS``), each list is named by its admin, and no list page is
titled in Django's words ("Select account to change")."""

from __future__ import annotations

import re

from django.apps import apps
from django.contrib import admin

from ledgerproject.admin_site import TASKS

SECTIONS = ["Ledgers", "Accounts", "Transactions", "Approvals", "Reports", "Developers", "Staff"]


def _lists() -> list[str]:
    return [
        f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
        for model in apps.get_models()
        if admin.site.is_registered(model)
    ]


def test_the_index_groups_the_lists_by_task_and_every_list_has_a_task(admin_client, book):
    app_list = admin_client.get("/admin/").context["app_list"]
    assert [section["name"] for section in app_list] == SECTIONS
    named = {label for _, labels in TASKS for label in labels.split()}
    registered = {
        model._meta.label_lower for model in apps.get_models() if admin.site.is_registered(model)
    }
    assert registered == named
    reports = next(section for section in app_list if section["name"] == "Reports")
    assert [entry["name"] for entry in reports["models"]] == ["Audit trail"]


def test_the_sidebar_groups_the_same_way(admin_client, book):
    page = admin_client.get("/admin/organizations/account/")
    assert [section["name"] for section in page.context["available_apps"]] == SECTIONS


def test_a_user_sees_only_the_sections_of_the_lists_they_may_see(book):
    from tests.admin.helpers import staff_client

    client = staff_client("transactions.view_transaction", "outbox.view_event")
    app_list = client.get("/admin/").context["app_list"]
    assert [(s["name"], [e["name"] for e in s["models"]]) for s in app_list] == [
        ("Transactions", ["Transactions"]),
        ("Reports", ["Audit trail"]),
    ]


def test_no_list_is_titled_in_django_s_words(admin_client, book):
    for url in _lists():
        page = admin_client.get(url)
        assert page.status_code == 200, url
        title = re.search(r"<h1>(.*?)</h1>", page.content.decode(), re.S)
        assert title and not title.group(1).startswith("Select"), (url, title)
    assert "<h1>Audit trail</h1>" in admin_client.get("/admin/outbox/event/").content.decode()
