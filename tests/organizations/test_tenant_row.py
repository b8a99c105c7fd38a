"""Saving an existing tenant row (``ledgerproject.tenancy.TenantRow``): one ``UPDATE`` that
names the row's organization in its ``WHERE`` (Citus routes it to the row's node) and never
sets ``organization_id`` (Citus refuses that even unchanged)."""

from __future__ import annotations

import re
import uuid
from typing import Any

import pytest
from django.db import DatabaseError, connection
from django.test.utils import CaptureQueriesContext

from organizations.models import Ledger


def _updates(save: Any) -> list[str]:
    with CaptureQueriesContext(connection) as queries:
        save()
    return [q["sql"] for q in queries.captured_queries if q["sql"].startswith("UPDATE")]


@pytest.mark.django_db
def test_a_save_names_the_organization_and_never_sets_it(ledger):
    row = Ledger.objects.get(pk=ledger["id"])
    before = row.updated_at
    row.name = "renamed"
    (update,) = _updates(row.save)
    assigned, where = update.split(" WHERE ")
    assert '"organization_id"' not in assigned
    assert re.search(r'"organization_id" = ', where), where
    assert '"name" = ' in assigned
    stored = Ledger.objects.get(pk=row.pk)
    assert (stored.name, stored.organization_id) == ("renamed", row.organization_id)
    assert stored.updated_at > before  # auto_now, as Django's own save


@pytest.mark.django_db
def test_a_save_of_some_fields_writes_only_those(ledger):
    row = Ledger.objects.get(pk=ledger["id"])
    row.name, row.metadata = "not written", {"k": "v"}
    (update,) = _updates(lambda: row.save(update_fields=["metadata", "updated_at"]))
    assigned = update.split(" WHERE ")[0]
    assert '"metadata" = ' in assigned and '"name"' not in assigned
    stored = Ledger.objects.get(pk=row.pk)
    assert stored.metadata == {"k": "v"} and stored.name != "not written"


@pytest.mark.django_db
def test_a_save_of_a_row_that_is_not_stored_is_refused(ledger):
    row = Ledger.objects.get(pk=ledger["id"])
    Ledger.objects.filter(pk=row.pk).delete()
    with pytest.raises(DatabaseError):
        row.save()


@pytest.mark.django_db
def test_a_save_writes_the_loaded_fields_only_and_names_real_fields(ledger):
    row = Ledger.objects.only("id", "organization_id", "name").get(pk=ledger["id"])
    row.name = "renamed"
    (update,) = _updates(row.save)
    assigned = update.split(" WHERE ")[0]
    assert '"name" = ' in assigned and '"metadata"' not in assigned
    with pytest.raises(ValueError, match="names no field"):
        row.save(update_fields=["nmae"])


@pytest.mark.django_db
def test_force_update_updates_a_new_instance_of_a_stored_row_and_never_inserts(ledger):
    stored = Ledger.objects.get(pk=ledger["id"])
    again = Ledger(
        pk=stored.pk,
        organization_id=stored.organization_id,
        name="again",
        created_at=stored.created_at,
    )
    (update,) = _updates(lambda: again.save(force_update=True, using="default"))
    assert '"organization_id" = ' in update.split(" WHERE ")[1]
    assert Ledger.objects.get(pk=stored.pk).name == "again"
    assert again._state.db == "default"
    with pytest.raises(ValueError, match="force both"):
        again.save(force_insert=True, force_update=True)
    with pytest.raises(DatabaseError):
        Ledger(pk=uuid.uuid4(), organization_id=stored.organization_id).save(force_update=True)
