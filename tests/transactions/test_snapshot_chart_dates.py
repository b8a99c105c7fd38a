"""The charts of now (``totalAmountByAsset``, ``overdraftByAsset``) take no dates they need,
but those a client sends are checked as every chart checks them: a malformed or empty date is
400 0077 (an empty one, or a number where a string is due, 0047 as in every body), an end
before the start 400 0083; the answer's dates stay null."""

from __future__ import annotations

import pytest

from tests.conftest import assert_error

SNAPSHOTS = ["totalAmountByAsset", "totalAmountByInstrument", "overdraftByAsset"]


def _chart(book, body):
    return book.api.post(f"{book.url}/charts", body)


@pytest.mark.parametrize("chart", SNAPSHOTS)
@pytest.mark.parametrize("name", ["startDate", "endDate"])
@pytest.mark.parametrize("value", ["AAA", "02/02/2024", "2024-13-01"])
def test_a_snapshot_chart_refuses_a_malformed_date(book, chart, name, value):
    body = assert_error(_chart(book, {"type": chart, name: value}), 400, "0077")
    assert name in body["description"]


@pytest.mark.parametrize("chart", SNAPSHOTS)
@pytest.mark.parametrize("value", [20240101, True, ""])
def test_a_snapshot_chart_refuses_an_empty_date_or_one_that_is_no_string(book, chart, value):
    body = assert_error(_chart(book, {"type": chart, "endDate": value}), 400, "0047")
    assert "endDate" in body["fields"]


@pytest.mark.parametrize("chart", SNAPSHOTS)
def test_a_snapshot_chart_refuses_an_end_before_its_start(book, chart):
    body = {"type": chart, "startDate": "2024-02-02", "endDate": "2024-02-01"}
    assert_error(_chart(book, body), 400, "0083")


@pytest.mark.parametrize("chart", SNAPSHOTS)
def test_a_snapshot_chart_takes_valid_dates_or_none(book, chart):
    for body in (
        {"type": chart},
        {"type": chart, "startDate": None, "endDate": None},
        {"type": chart, "startDate": "2024-02-01", "endDate": "2024-02-01T10:00:00+00:00"},
    ):
        response = _chart(book, body)
        assert response.status_code == 200, response.content
        assert response.json()["startDate"] is None and response.json()["endDate"] is None
