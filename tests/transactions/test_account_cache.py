"""The accounts a posting read are kept in the process (PostgreSQL), so the next posting naming
them is checked and prepared before its locks; the statement that locks their balances reads
them again, and a posting whose copies differ from what it read is checked and prepared again,
under the locks, from what it read. A copy never decides: an account blocked, opened or
replaced since is seen by the very next posting, whichever process changed it (a direct row
update stands for another process)."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone

from organizations.models import Account
from tests.conftest import assert_error, requires_postgres
from transactions import copies, lookups, run


@pytest.fixture
def paid(book):
    book.fund("@alice", 10_000)
    assert book.pay(100, 10).status_code == 201  # every account of the payment kept now
    return book


def test_an_account_closed_elsewhere_is_refused_at_the_next_posting(paid):
    Account.objects.filter(alias="@bob").update(allow_receiving=False)
    before = paid.available("@bob")
    assert_error(paid.pay(100, 10), 422, "0024")
    assert paid.available("@bob") == before


def test_an_account_opened_elsewhere_posts_at_the_next_posting(paid):
    Account.objects.filter(alias="@bob").update(status_code="BLOCKED")
    assert_error(paid.pay(100, 10), 422, "0024")  # the copy kept is now the blocked one
    Account.objects.filter(alias="@bob").update(status_code="ACTIVE")
    before = paid.available("@bob")
    assert paid.pay(100, 10).status_code == 201
    assert paid.available("@bob") == before + 100


def test_an_alias_given_to_a_new_account_posts_to_the_new_one(paid):
    old = Account.objects.get(alias="@bob")
    old_balance = paid.available("@bob")
    Account.objects.filter(pk=old.pk).update(deleted_at=timezone.now())
    new = paid.account("@bob")
    response = paid.pay(100, 10)
    assert response.status_code == 201, response.content
    credited = [op for op in response.json()["operations"] if op["accountAlias"] == "@bob"]
    assert [op["accountId"] for op in credited] == [new["id"]]
    assert Account.objects.get(pk=old.pk).balance.available == old_balance


@requires_postgres()
def test_a_posting_with_kept_accounts_is_prepared_before_its_locks(paid, monkeypatch):
    steps: list[str] = []
    prepare, lock = run.prepare, lookups.PostingLookups.lock_accounts

    def spy_prepare(*args: Any, **kwargs: Any) -> Any:
        steps.append("prepare")
        return prepare(*args, **kwargs)

    def spy_lock(self: Any, *args: Any) -> Any:
        steps.append("lock")
        return lock(self, *args)

    monkeypatch.setattr(run, "prepare", spy_prepare)
    monkeypatch.setattr(lookups.PostingLookups, "lock_accounts", spy_lock)
    ledger_id = paid.url.rsplit("/", 1)[1]
    kept = {alias for (ledger, alias) in copies.kept_accounts if str(ledger) == ledger_id}
    assert kept == {"@alice", "@bob", "@fees/platform", "@external/BRL"}

    assert paid.pay(100, 10).status_code == 201
    assert steps == ["prepare", "lock"]

    steps.clear()
    Account.objects.filter(alias="@bob").update(name="Robert")
    assert paid.pay(100, 10).status_code == 201  # a column a posting does not read
    assert steps == ["prepare", "lock"]

    steps.clear()
    Account.objects.filter(alias="@bob").update(allow_sending=False)
    assert paid.pay(100, 10).status_code == 201  # read, differs: prepared again, posts
    assert steps == ["prepare", "lock", "prepare"]
