"""Metadata edited as rows of keys and values, an address as its parts
(``ledgerproject.admin_widgets``): shown and saved unchanged they stay exactly as stored, types
included; rows add, change and drop keys; an address names its country or is empty."""

from __future__ import annotations

import json

from django.http import QueryDict

from ledgerproject.admin_widgets import MetadataWidget
from organizations.models import Account, Organization
from tests.admin.helpers import change_form, ledger_of


def test_values_keep_their_types_through_the_fields():
    widget = MetadataWidget()
    stored = {"n": 42, "ok": True, "code": "42", "name": "Alice", "x": 1.5, "t": "true",
              "pad": " gold ", "two": "a\nb", " k ": "v"}  # fmt: skip
    rows = widget.format_value(stored)
    assert rows[:9] == [("n", "42"), ("ok", "true"), ("code", '"42"'), ("name", "Alice"),
                        ("x", "1.5"), ("t", '"true"'), ("pad", '" gold "'), ("two", '"a\\nb"'),
                        (" k ", "v")]  # fmt: skip
    assert rows[9:] == [("", "")] * 3
    posted = QueryDict(mutable=True)
    for key, value in rows:
        posted.appendlist("metadata__key", key)
        posted.appendlist("metadata__value", value)
    assert json.loads(widget.value_from_datadict(posted, {}, "metadata")) == stored


def test_the_account_page_edits_metadata_as_rows(admin_client, book):
    bob = Account.objects.get(alias="@bob")
    Account.objects.filter(pk=bob.pk).update(metadata={"tier": "gold", "limit": 3})
    url, data, _ = change_form(admin_client, "organizations/account", bob)
    page = admin_client.get(url).content.decode()
    assert 'name="metadata__key" value="tier"' in page and 'value="gold"' in page
    data.pop("metadata")
    rows = {"metadata__key": ["tier", "limit", "region", ""],
            "metadata__value": ["platinum", "3", "south", ""]}  # fmt: skip
    response = admin_client.post(url, {**data, **rows})
    assert response.status_code == 302
    assert Account.objects.get(pk=bob.pk).metadata == {
        "tier": "platinum", "limit": 3, "region": "south"
    }  # fmt: skip
    dropped = {"metadata__key": ["", "limit"], "metadata__value": ["x", "3"]}
    assert admin_client.post(url, {**data, **dropped}).status_code == 302
    assert Account.objects.get(pk=bob.pk).metadata == {"limit": 3}


def test_an_organization_s_address_is_edited_as_its_parts(admin_client, book):
    organization = Organization.objects.get(pk=ledger_of(book).organization_id)
    url, data, _ = change_form(admin_client, "organizations/organization", organization)
    page = admin_client.get(url).content.decode()
    assert 'name="address__city"' in page and '<option value="BR">Brazil (BR)</option>' in page
    data.pop("address")
    typed = {"line1": "Rua A, 1", "line2": "", "zipCode": "01000-000", "city": "São Paulo",
             "state": "SP", "country": ""}  # fmt: skip
    parts = {f"address__{part}": text for part, text in typed.items()}
    refused = admin_client.post(url, {**data, **parts})
    assert "An address names its country" in refused.content.decode()
    saved = admin_client.post(url, {**data, **parts, "address__country": "BR"})
    assert saved.status_code == 302
    assert Organization.objects.get(pk=organization.pk).address == {
        "line1": "Rua A, 1", "zipCode": "01000-000", "city": "São Paulo", "state": "SP",
        "country": "BR",
    }  # fmt: skip
    page = admin_client.get(url).content.decode()
    assert '<option value="BR" selected>' in page and 'value="São Paulo"' in page


def test_an_address_saved_unchanged_stays_as_stored_and_bad_parts_are_refused(admin_client, book):
    organization = Organization.objects.get(pk=ledger_of(book).organization_id)
    stored = {"line1": "", "line2": None, "city": "Recife", "country": "BR"}
    Organization.objects.filter(pk=organization.pk).update(address=stored)
    url, data, _ = change_form(admin_client, "organizations/organization", organization)
    data.pop("address")
    typed = {"line1": "", "line2": "", "zipCode": "", "city": "Recife", "state": "",
             "country": "BR"}  # fmt: skip
    unchanged: dict[str, str] = {f"address__{part}": text for part, text in typed.items()}
    unchanged["initial-address"] = json.dumps(stored)  # as the page carries the first value
    assert admin_client.post(url, {**data, **unchanged}).status_code == 302
    assert Organization.objects.get(pk=organization.pk).address == stored  # as it was
    for bad, said in (
        ({"address__city": "Re\x00cife"}, "NUL"),
        ({"address__zipCode": "1" * 33}, "too long"),
        ({"address__country": "XX"}, "not an ISO 3166-1"),
    ):
        response = admin_client.post(url, {**data, **unchanged, **bad})
        assert response.status_code == 200 and said in response.content.decode(), bad
    raw = admin_client.post(url, {**data, "address": "[1"})
    assert raw.status_code == 200
    listed = admin_client.post(url, {**data, "address": "[1]"})
    assert listed.status_code == 200 and "an object of its parts" in listed.content.decode()


def test_a_malformed_parent_in_the_address_bar_is_left_out(admin_client, book):
    page = admin_client.get(
        "/admin/templates_dsl/transactiontemplate/add/", {"_changelist_filters": "ledger=xyz"}
    )
    assert page.status_code == 200
