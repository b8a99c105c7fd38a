"""The ready-made roles (``manage.py setup_roles``, ``ledgerproject.roles``): each group holds
exactly its permissions, and a user of each role sees and does what docs/BACK-OFFICE.md says,
no more. The internal records (API tokens, idempotency keys, events' deliveries, webhook
subscriptions, the raw operation list) are an administrator's; a transaction's operations are
on its page for every role."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.core.management import call_command
from django.test import Client

from ledgerproject.roles import ROLES, permissions_of, setup_roles
from organizations.models import Account, Ledger
from tests.admin.helpers import ledger_of

INTERNAL = (
    "/admin/organizations/apitoken/",
    "/admin/transactions/idempotencykey/",
    "/admin/outbox/delivery/",
    "/admin/outbox/webhooksubscription/",
    "/admin/transactions/operation/",
)


def client_of(role: str) -> Client:
    setup_roles()
    user = get_user_model().objects.create_user(f"{role}-user", password="x", is_staff=True)
    user.groups.add(Group.objects.get(name=role))
    client = Client()
    client.force_login(user)
    return client


def held(group: str) -> set[str]:
    return {
        f"{p.content_type.app_label}.{p.codename}"
        for p in Group.objects.get(name=group).permissions.select_related("content_type")
    }


def test_the_command_makes_every_group_and_sets_an_edited_one_back(db):
    out = StringIO()
    call_command("setup_roles", stdout=out)
    assert [line.split()[0] for line in out.getvalue().splitlines()] == [r.name for r in ROLES]
    support = Group.objects.get(name="support")
    extra = Permission.objects.get(codename="add_transaction")
    support.permissions.add(extra)
    call_command("setup_roles", stdout=StringIO())
    assert "transactions.add_transaction" not in held("support")
    assert held("support") == set(ROLES[1].permissions)
    assert Group.objects.filter(name__in=[r.name for r in ROLES]).count() == len(ROLES)


def test_an_administrator_holds_every_permission_of_the_service_and_its_staff(db):
    setup_roles()
    everything = {
        f"{p.content_type.app_label}.{p.codename}"
        for p in Permission.objects.select_related("content_type").exclude(
            content_type__app_label__in=["admin", "contenttypes", "sessions"]
        )
    }
    assert held("administrator") == everything


def test_only_the_administrator_may_read_the_internal_records(book):
    for role in ROLES:
        client = client_of(role.name)
        index = client.get("/admin/").content.decode()
        for url in INTERNAL:
            allowed = role.name == "administrator" or (
                url == "/admin/transactions/operation/" and role.name in {"accountant", "approver"}
            )
            assert (client.get(url).status_code == 200) == allowed, (role.name, url)
            assert (url in index) == allowed, (role.name, url)


def test_a_viewer_reads_a_transaction_with_its_operations_and_can_act_on_nothing(book):
    book.fund("@alice", 10_000)
    sent = book.pay(100, 1).json()
    ledger = ledger_of(book)
    client = client_of("viewer")
    page = client.get(f"/admin/transactions/transaction/{sent['id']}/change/").content.decode()
    assert "@alice" in page and "@bob" in page  # the operations' accounts, on its page
    assert 'id="revert_transactions"' not in page
    assert client.get(f"/admin/organizations/ledger/{ledger.pk}/dashboard/").status_code == 200
    assert client.get(f"/admin/organizations/ledger/{ledger.pk}/post/").status_code == 403
    accounts = client.get("/admin/organizations/account/").content.decode()
    assert "/admin/transactions/operation/" not in accounts  # no statement link to a 403
    assert client.get("/admin/organizations/account/add/").status_code == 403


@pytest.mark.parametrize(
    ("role", "may_post", "may_change_accounts", "may_reopen"),
    [
        ("viewer", False, False, False),
        ("support", False, True, False),
        ("accountant", True, True, False),
        ("approver", False, False, True),
        ("administrator", True, True, True),
    ],
)
def test_each_role_may_do_what_its_summary_says(
    book, role, may_post, may_change_accounts, may_reopen
):
    ledger = ledger_of(book)
    client = client_of(role)
    user = get_user_model().objects.get(username=f"{role}-user")
    assert (
        client.get(f"/admin/organizations/ledger/{ledger.pk}/post/").status_code == 200
    ) == may_post
    alice = book.accounts["@alice"]
    change = client.get(f"/admin/organizations/account/{alice['id']}/change/").content.decode()
    assert ('name="status_code"' in change) == may_change_accounts
    assert user.has_perm("organizations.reopen_period") == may_reopen


def test_a_role_naming_an_unknown_permission_is_refused(db):
    role = ROLES[0].__class__("typo", "", ("transactions.view_transactoin",))
    with pytest.raises(LookupError, match="view_transactoin"):
        permissions_of(role)


def test_deactivating_needs_the_delete_permission_not_the_change_one(book):
    """A support agent changes accounts and an accountant ledgers; neither removes one."""
    ledger = ledger_of(book)
    bob = book.accounts["@bob"]
    for role, page, pk in (
        ("support", "/admin/organizations/account/", bob["id"]),
        ("accountant", "/admin/organizations/ledger/", str(ledger.pk)),
    ):
        client = client_of(role)
        assert "deactivate" not in client.get(page).content.decode()
        client.post(page, {"action": "deactivate", "_selected_action": [pk]})
    assert Account.objects.get(pk=bob["id"]).deleted_at is None
    assert Ledger.objects.get(pk=ledger.pk).deleted_at is None
    admin = client_of("administrator")
    admin.post(
        "/admin/organizations/account/", {"action": "deactivate", "_selected_action": [bob["id"]]}
    )
    assert Account.objects.get(pk=bob["id"]).deleted_at is not None
