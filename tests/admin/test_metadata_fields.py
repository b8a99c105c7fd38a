"""Metadata edited as rows of keys and values (``ledgerproject.admin_widgets``): shown and saved
unchanged it stays exactly as stored, types included; rows add, change and drop keys."""

from __future__ import annotations

from django.http import QueryDict

from ledgerproject.admin_widgets import MetadataWidget
from organizations.models import Account
from tests.admin.helpers import change_form


def test_values_keep_their_types_through_the_fields():
    widget = MetadataWidget()
    stored = {"n": 42, "ok": True, "code": "42", "name": "Alice", "x": 1.5, "t": "true"}
    rows = widget.format_value(stored)
    assert rows[:6] == [("n", "42"), ("ok", "true"), ("code", '"42"'), ("name", "Alice"),
                        ("x", "1.5"), ("t", '"true"')]  # fmt: skip
    assert rows[6:] == [("", "")] * 3
    posted = QueryDict(mutable=True)
    for key, value in rows:
        posted.appendlist("metadata__key", key)
        posted.appendlist("metadata__value", value)
    assert widget.value_from_datadict(posted, {}, "metadata") == (
        '{"n": 42, "ok": true, "code": "42", "name": "Alice", "x": 1.5, "t": "true"}'
    )


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
