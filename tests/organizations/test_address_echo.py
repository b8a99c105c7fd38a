"""An organization's address is answered as it was sent: the fields the client gave and no
others (``"line2": null`` only when the client sent it), on create, read, list, PATCH and in the
organization's events."""

from __future__ import annotations

ORG = {"legalName": "Acme", "legalDocument": "1"}


def test_the_address_holds_only_what_was_sent(api):
    made = api.post("/v1/organizations", {**ORG, "address": {"country": "BR"}}).json()
    assert made["address"] == {"country": "BR"}
    url = f"/v1/organizations/{made['id']}"
    assert api.get(url).json()["address"] == {"country": "BR"}
    [listed] = [o for o in api.get("/v1/organizations").json() if o["id"] == made["id"]]
    assert listed["address"] == {"country": "BR"}
    patched = api.patch(url, {"address": {"line1": "1 Main St", "country": "PT"}}).json()
    assert patched["address"] == {"line1": "1 Main St", "country": "PT"}
    events = api.get(f"{url}/events").json()
    assert [e["data"]["address"] for e in events] == [
        {"country": "BR"},
        {"line1": "1 Main St", "country": "PT"},
    ]


def test_a_null_line2_that_was_sent_is_echoed(api):
    address = {"line1": "1 Main St", "line2": None, "country": "BR"}
    made = api.post("/v1/organizations", {**ORG, "address": address}).json()
    assert made["address"] == address


def test_no_address_is_an_empty_object(api):
    made = api.post("/v1/organizations", ORG).json()
    assert made["address"] == {}
