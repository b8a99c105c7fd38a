"""Accounts racing for one alias on PostgreSQL: PATCHes of two accounts to the same alias, and
a PATCH against a create, end with exactly one account holding it (the other 409 0020)."""

from __future__ import annotations

import pytest
from django.db import connection

from organizations.models import Account
from tests.concurrency.conftest import run_threads
from tests.conftest import Api

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="needs PostgreSQL: row locks and concurrent connections",
    ),
]

ROUNDS = 10


def test_one_alias_one_active_account(book):
    for round_ in range(ROUNDS):
        alias = f"@wanted{round_}"
        ids = [book.account(f"@r{round_}_{i}")["id"] for i in range(3)]

        def work(index, barrier, alias=alias, ids=ids):
            api = Api(book.api.token)
            barrier.wait()
            if index < 3:
                return api.patch(f"{book.url}/accounts/{ids[index]}", {"alias": alias})
            return api.post(f"{book.url}/accounts", {"alias": alias, "assetCode": "BRL"})

        results = run_threads(4, work)
        codes = sorted(r.status_code for r in results)
        assert codes.count(409) == 3 and codes.count(200) + codes.count(201) == 1, codes
        assert all(r.json()["code"] == "0020" for r in results if r.status_code == 409)
        holders = Account.objects.filter(alias=alias, deleted_at__isnull=True).count()
        assert holders == 1
