"""Moves of organizations racing creations and each other on PostgreSQL: the tree (parents and
materialised paths) stays consistent, so no token ever reaches an organization it should not.

Before the tree lock, a child created under X while X moved from P to Q kept the old path
(/T/P/X/C/): P's token could still read it. Two crossing moves (X under Y, Y under X) both
succeeded and made a cycle."""

from __future__ import annotations

import pytest
from django.db import connection

from organizations.integrity import tree_problems
from organizations.models import Organization
from tests.concurrency.conftest import run_threads
from tests.conftest import Api, make_token
from tests.organizations.helpers import organization

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="needs PostgreSQL: row locks and concurrent connections",
    ),
]

ROUNDS = 12


def _assert_tree_consistent() -> None:
    assert tree_problems() == []
    by_id = {o.pk: o for o in Organization.objects.all()}
    for org in by_id.values():
        expected = (by_id[org.parent_id].path if org.parent_id else "/") + f"{org.pk.hex}/"
        assert org.path == expected, (org.legal_name, org.path, expected)


def test_a_child_created_during_a_move_follows_its_parent():
    root = Api(make_token("root"))
    for round_ in range(ROUNDS):
        t = organization(root, "T")
        p = organization(root, "P", t)
        q = organization(root, "Q", t)
        x = organization(root, "X", p)
        p_api = Api(make_token(f"p{round_}", organization_ids=[p]))
        q_api = Api(make_token(f"q{round_}", organization_ids=[q]))

        def work(index, barrier, x=x, q=q, p_api=p_api):
            api = Api(root.token) if index == 0 else p_api
            barrier.wait()
            if index == 0:
                return api.patch(f"/v1/organizations/{x}", {"parentOrganizationId": q})
            return api.post(
                "/v1/organizations",
                {"legalName": "C", "legalDocument": "1", "parentOrganizationId": x},
            )

        moved, created = run_threads(2, work)
        assert moved.status_code == 200, moved.content
        _assert_tree_consistent()
        if created.status_code == 201:
            child = created.json()["id"]
            assert p_api.get(f"/v1/organizations/{child}").status_code == 404
            assert q_api.get(f"/v1/organizations/{child}").status_code == 200
        else:
            # The move won the lock first: X is no longer under P's reach.
            assert created.status_code == 422, created.content
            assert created.json()["code"] == "0039"


def test_two_crossing_moves_never_make_a_cycle():
    root = Api(make_token("root"))
    for _ in range(ROUNDS):
        t = organization(root, "T")
        x = organization(root, "X", t)
        y = organization(root, "Y", t)

        def work(index, barrier, x=x, y=y):
            api = Api(root.token)
            child, parent = (x, y) if index == 0 else (y, x)
            barrier.wait()
            return api.patch(f"/v1/organizations/{child}", {"parentOrganizationId": parent})

        results = run_threads(2, work)
        codes = sorted(r.status_code for r in results)
        assert codes == [200, 422], [r.content for r in results]
        refused = next(r for r in results if r.status_code == 422)
        assert refused.json()["code"] == "0008"
        _assert_tree_consistent()
