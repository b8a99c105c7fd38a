"""``rows.Select`` with ``only``: the statement names the chosen columns (and the primary key)
and nothing else, the instances carry those values converted as the ORM would, and any other
field is deferred (reading it is a query of its own)."""

from __future__ import annotations

from django.db import connection
from django.test.utils import CaptureQueriesContext

from ledgerproject.rows import Select
from organizations.models import Account
from transactions.lookups import POSTING_ACCOUNT_FIELDS

ONLY = Select(
    Account,
    "a",
    "FROM organizations_account a WHERE a.organization_id = %s AND a.alias = %s",
    only=POSTING_ACCOUNT_FIELDS,
)


def test_it_reads_only_the_fields_named(book):
    stored = Account.objects.get(alias="@alice")
    assert ONLY.sql.count(", ") == len(POSTING_ACCOUNT_FIELDS) - 1
    assert '"created_at"' not in ONLY.sql and '"metadata"' not in ONLY.sql
    org = Account._meta.get_field("id").get_db_prep_value(stored.organization_id, connection)
    (account,) = ONLY.fetch([org, "@alice"])
    for name in ("pk", "alias", "portfolio_id", "asset_code", "status_code", "deleted_at"):
        assert getattr(account, name) == getattr(stored, name), name
    assert (account.allow_sending, account.allow_receiving) == (True, True)
    assert account.get_deferred_fields() >= {"created_at", "metadata", "name", "ledger_id"}
    with CaptureQueriesContext(connection) as queries:
        assert account.metadata == stored.metadata
    assert len(queries) == 1


def test_without_only_every_field_is_read(book):
    every = Select(Account, "a", "FROM organizations_account a WHERE a.alias = %s")
    (account,) = every.fetch(["@alice"])
    assert every.attnames == tuple(f.attname for f in Account._meta.concrete_fields)
    assert account.get_deferred_fields() == set()
