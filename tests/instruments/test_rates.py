"""/instrument-rates and /asset-rates: one rate record, two faces."""

from __future__ import annotations

import pytest

from instruments import services as instrument_services
from tests.conftest import assert_error
from tests.organizations.helpers import assert_isolated, create, ids, instrument

FACES = {
    "instrument-rates": ("baseInstrumentCode", "counterInstrumentCode"),
    "asset-rates": ("baseAssetCode", "counterAssetCode"),
}
OTHER = {"instrument-rates": "asset-rates", "asset-rates": "instrument-rates"}


def rate_body(face: str, base: str = "USD", counter: str = "EUR", **extra):
    base_name, counter_name = FACES[face]
    return {base_name: base, counter_name: counter, "amount": 92, "scale": 2, **extra}


@pytest.fixture
def pair(usd, eur):
    return usd, eur


@pytest.mark.parametrize("face", list(FACES))
def test_it_creates_a_rate_and_reads_it_through_both_faces(api, ledger, ledger_url, pair, face):
    response = api.post(f"{ledger_url}/{face}", rate_body(face, source="ECB"))
    assert response.status_code == 201, response.content
    body = response.json()
    base_name, counter_name = FACES[face]
    assert (body[base_name], body[counter_name]) == ("USD", "EUR")
    assert (body["amount"], body["scale"], body["source"]) == (92, 2, "ECB")
    assert body["status"] == {"code": "ACTIVE", "description": None}
    assert body["ledgerId"] == ledger["id"] and body["organizationId"] == ledger["organizationId"]
    assert body["deletedAt"] is None and body["createdAt"] and body["updatedAt"]

    other = OTHER[face]
    other_base, other_counter = FACES[other]
    seen = api.get(f"{ledger_url}/{other}/{body['id']}").json()
    assert (seen[other_base], seen[other_counter]) == ("USD", "EUR")
    assert base_name not in seen
    assert {k: v for k, v in seen.items() if k not in (other_base, other_counter)} == {
        k: v for k, v in body.items() if k not in (base_name, counter_name)
    }
    assert ids(api.get(f"{ledger_url}/{other}")) == [body["id"]]


def test_it_defaults_source_and_keeps_status_and_metadata(api, ledger_url, pair):
    body = create(
        api,
        f"{ledger_url}/instrument-rates",
        rate_body(
            "instrument-rates", status={"code": "CUSTOM-1", "description": "x"}, metadata={"k": 1}
        ),
    )
    assert body["source"] == ""
    assert body["status"] == {"code": "CUSTOM-1", "description": "x"}
    assert body["metadata"] == {"k": 1}


def test_it_patches_through_one_face_and_deletes_through_the_other(api, ledger_url, pair):
    made = create(api, f"{ledger_url}/asset-rates", rate_body("asset-rates"))
    patched = api.patch(
        f"{ledger_url}/instrument-rates/{made['id']}",
        {"amount": 93, "scale": 3, "source": "BCB", "metadata": {"a": "b"}},
    )
    assert patched.status_code == 200, patched.content
    body = patched.json()
    assert (body["amount"], body["scale"], body["source"], body["metadata"]) == (
        93,
        3,
        "BCB",
        {"a": "b"},
    )
    assert body["baseInstrumentCode"] == "USD"

    assert api.delete(f"{ledger_url}/asset-rates/{made['id']}").status_code == 204
    deleted = api.get(f"{ledger_url}/instrument-rates/{made['id']}").json()
    assert deleted["status"] == {"code": "INACTIVE", "description": None}
    assert deleted["deletedAt"] is not None
    assert_error(api.delete(f"{ledger_url}/instrument-rates/{made['id']}"), 400, "0013")
    assert_error(api.patch(f"{ledger_url}/asset-rates/{made['id']}", {"amount": 1}), 400, "0013")
    assert ids(api.get(f"{ledger_url}/asset-rates")) == [made["id"]]
    assert ids(api.get(f"{ledger_url}/asset-rates", {"deleted": "false"})) == []


@pytest.mark.parametrize("face", list(FACES))
def test_it_refuses_missing_fields(api, ledger_url, pair, face):
    body = assert_error(api.post(f"{ledger_url}/{face}", {"amount": 1}), 400, "0009")
    assert set(body["fields"]) == {*FACES[face], "scale"}


@pytest.mark.parametrize(
    "change",
    [
        {"amount": 0},
        {"amount": -5},
        {"amount": 1.5},
        {"amount": "92"},
        {"amount": True},
        {"amount": 2**63},
        {"scale": -1},
        {"scale": 19},
        {"scale": "2"},
    ],
)
def test_it_refuses_bad_amounts_and_scales(api, ledger_url, pair, change):
    body = {**rate_body("instrument-rates"), **change}
    assert_error(api.post(f"{ledger_url}/instrument-rates", body), 400, "0047")


def test_it_accepts_the_largest_scale(api, ledger_url, pair):
    body = create(api, f"{ledger_url}/asset-rates", rate_body("asset-rates", scale=18, amount=1))
    assert body["scale"] == 18


@pytest.mark.parametrize("face", list(FACES))
def test_it_refuses_a_pair_of_one_code(api, ledger_url, pair, face):
    body = rate_body(face, base="USD", counter="USD")
    error = assert_error(api.post(f"{ledger_url}/{face}", body), 400, "0047")
    assert FACES[face][1] in error["fields"]


@pytest.mark.parametrize("face", list(FACES))
def test_it_refuses_codes_that_are_not_active_instruments(
    api, ledger_url, other_ledger_url, pair, face
):
    assert_error(api.post(f"{ledger_url}/{face}", rate_body(face, base="GBP")), 422, "0034")
    assert_error(api.post(f"{ledger_url}/{face}", rate_body(face, counter="GBP")), 422, "0034")
    instrument(api, other_ledger_url, "GBP")
    assert_error(api.post(f"{ledger_url}/{face}", rate_body(face, counter="GBP")), 422, "0034")
    usd, _ = pair
    assert api.delete(f"{ledger_url}/instruments/{usd['id']}").status_code == 204
    assert_error(api.post(f"{ledger_url}/{face}", rate_body(face)), 422, "0034")


def test_it_refuses_a_second_active_rate_for_a_pair_and_source(api, ledger_url, pair):
    first = create(api, f"{ledger_url}/instrument-rates", rate_body("instrument-rates"))
    for face in FACES:
        assert_error(api.post(f"{ledger_url}/{face}", rate_body(face)), 409, "0028")
    create(api, f"{ledger_url}/asset-rates", rate_body("asset-rates", source="ECB"))
    create(api, f"{ledger_url}/asset-rates", rate_body("asset-rates", base="EUR", counter="USD"))
    assert api.delete(f"{ledger_url}/asset-rates/{first['id']}").status_code == 204
    create(api, f"{ledger_url}/asset-rates", rate_body("asset-rates"))


def test_it_answers_409_when_a_concurrent_create_wins(api, ledger_url, pair, monkeypatch):
    create(api, f"{ledger_url}/instrument-rates", rate_body("instrument-rates"))
    monkeypatch.setattr(instrument_services, "_pair_taken", lambda rate: False)
    assert_error(
        api.post(f"{ledger_url}/instrument-rates", rate_body("instrument-rates")), 409, "0028"
    )


def test_it_refuses_a_patch_of_source_onto_a_taken_pair(api, ledger_url, pair):
    create(api, f"{ledger_url}/instrument-rates", rate_body("instrument-rates", source="A"))
    other = create(api, f"{ledger_url}/instrument-rates", rate_body("instrument-rates", source="B"))
    url = f"{ledger_url}/asset-rates/{other['id']}"
    assert_error(api.patch(url, {"source": "A"}), 409, "0028")
    assert api.get(url).json()["source"] == "B"
    assert api.patch(url, {"source": "B", "amount": 1}).status_code == 200


@pytest.mark.parametrize(
    "field",
    [
        "baseInstrumentCode",
        "counterInstrumentCode",
        "baseAssetCode",
        "counterAssetCode",
        "createdAt",
        "updatedAt",
        "deletedAt",
        "id",
        "ledgerId",
    ],
)
@pytest.mark.parametrize("face", list(FACES))
def test_it_refuses_to_patch_codes_and_timestamps(api, ledger_url, pair, face, field):
    made = create(api, f"{ledger_url}/{face}", rate_body(face))
    response = api.patch(f"{ledger_url}/{face}/{made['id']}", {field: "X"})
    assert field in assert_error(response, 400, "0006")["fields"]


def test_it_refuses_unknown_fields(api, ledger_url, pair):
    body = rate_body("instrument-rates", baseAssetCode="USD")
    assert_error(api.post(f"{ledger_url}/instrument-rates", body), 400, "0053")


@pytest.mark.parametrize("face", list(FACES))
def test_it_filters_under_each_faces_names(api, ledger_url, pair, face):
    instrument(api, ledger_url, "GBP")
    a = create(api, f"{ledger_url}/{face}", rate_body(face, source="ECB", metadata={"m": "x"}))
    b = create(api, f"{ledger_url}/{face}", rate_body(face, base="GBP"))
    c = create(api, f"{ledger_url}/{face}", rate_body(face, base="EUR", counter="GBP"))
    base_name, counter_name = FACES[face]
    url = f"{ledger_url}/{face}"
    assert ids(api.get(url)) == [a["id"], b["id"], c["id"]]
    assert ids(api.get(url, {base_name: "USD"})) == [a["id"]]
    assert ids(api.get(url, {counter_name: "GBP"})) == [c["id"]]
    assert ids(api.get(url, {counter_name: "EUR", base_name: "GBP"})) == [b["id"]]
    assert ids(api.get(url, {"source": "ECB"})) == [a["id"]]
    assert ids(api.get(url, {"metadata.m": "x"})) == [a["id"]]
    assert ids(api.get(f"{url}?metadata=m:x")) == [a["id"]]
    assert ids(api.get(url, {"status": "INACTIVE"})) == []


@pytest.mark.parametrize("face", list(FACES))
@pytest.mark.parametrize("count", [1, 12])
def test_it_lists_in_a_constant_number_of_queries(
    api, ledger_url, face, count, django_assert_max_num_queries
):
    codes = [f"R{index}" for index in range(count + 1)]
    for code in codes:
        instrument(api, ledger_url, code, type="others")
    for counter in codes[1:]:
        create(api, f"{ledger_url}/{face}", rate_body(face, base=codes[0], counter=counter))
    with django_assert_max_num_queries(5):
        assert len(ids(api.get(f"{ledger_url}/{face}"))) == count


@pytest.mark.parametrize("face", list(FACES))
def test_it_hides_rates_from_other_organizations(api, ledger_url, pair, outsider, reader, face):
    made = create(api, f"{ledger_url}/{face}", rate_body(face))
    assert_isolated(
        outsider,
        reader,
        f"{ledger_url}/{face}",
        f"{ledger_url}/{face}/{made['id']}",
        rate_body(face, source="other"),
        {"amount": 1},
    )
    assert api.get(f"{ledger_url}/{face}/{made['id']}").json() == made


def test_it_answers_404_for_rates_of_another_ledger(api, ledger_url, other_ledger_url, pair):
    made = create(api, f"{ledger_url}/asset-rates", rate_body("asset-rates"))
    assert_error(api.get(f"{other_ledger_url}/asset-rates/{made['id']}"), 404, "0007")
    assert_error(api.get(f"{ledger_url}/asset-rates/nope"), 404, "0007")
