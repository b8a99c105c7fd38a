"""The JSON the API and the posting path write (``ledgerproject.jsonbytes``, orjson): the same
text as DRF's renderer and the standard library, and exact for 38-digit amounts, which orjson
alone cannot write."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st
from rest_framework import renderers

from ledgerproject import jsonbytes
from ledgerproject.api.renderers import JSONRenderer

BIG = 10**37 + 12345
SAMPLE = {
    "id": uuid.UUID("0190a7e0-0000-7000-8000-000000000001"),
    "amount": 12345,
    "createdAt": dt.datetime(2026, 11, 23, 16, 1, 2, 345678, tzinfo=dt.UTC),
    "rate": Decimal("1.25"),
    "text": "café ✓ \u2028 line",
    "nested": [{"a": None, "b": True, "c": 1.5}],
}


def test_the_renderer_writes_what_drf_writes() -> None:
    ours = JSONRenderer().render(SAMPLE)
    assert ours == renderers.JSONRenderer().render(SAMPLE)
    assert b"\\u2028" in ours


def test_an_amount_beyond_64_bits_is_exact_everywhere() -> None:
    data = {"amount": BIG, "legs": [{"amount": -BIG}]}
    assert json.loads(JSONRenderer().render(data)) == data
    assert json.loads(jsonbytes.dumps(data)) == data
    plain = jsonbytes.plain(data)
    assert plain == data and isinstance(plain["amount"], int)


def test_plain_keeps_64_bit_integers_as_integers() -> None:
    data = {"amount": 2**63 - 1, "negative": -(2**63)}
    assert jsonbytes.plain(data) == data


def test_indentation_asked_for_is_honoured() -> None:
    out = JSONRenderer().render({"a": 1}, "application/json; indent=2")
    assert out == b'{\n  "a": 1\n}'
    by_context = JSONRenderer().render({"a": 1}, "application/json", {"indent": 2})
    assert by_context == out
    assert JSONRenderer().render({"a": 1}, "application/json; INDENT=2") == out
    assert JSONRenderer().render({"a": 1}, "application/json", {}) == b'{"a":1}'


def test_what_neither_encoder_can_write_is_refused() -> None:
    try:
        jsonbytes.dumps({"x": object()})
    except TypeError:
        return
    raise AssertionError("an object JSON has no type for was written")


def _old_row_default(value: object) -> str:
    """What the rows were written with before ``row_text``: every datetime through Python."""
    if isinstance(value, dt.datetime):
        return value.isoformat()
    return str(value)


row_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**38) + 1, max_value=10**38 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=6),
    st.uuids(),
    st.decimals(allow_nan=False, allow_infinity=False, places=3),
    st.datetimes(timezones=st.just(dt.UTC)),
    st.dates(),
    st.datetimes(timezones=st.none()),
    st.datetimes(
        timezones=st.builds(
            lambda minutes: dt.timezone(dt.timedelta(minutes=minutes)),
            st.integers(min_value=-23 * 60, max_value=23 * 60),
        )
    ),
)
rows = st.lists(st.dictionaries(st.text(max_size=4), row_scalars, max_size=6), max_size=3)


@settings(max_examples=400, deadline=None)
@given(rows)
def test_row_text_writes_what_the_rows_were_written_as(value: list[dict[str, object]]) -> None:
    """The database's rows: orjson writes datetimes and UUIDs itself, to the same text as
    ``isoformat`` and ``str`` gave through a default, microseconds and offsets included, and
    an amount beyond 64 bits falls back to the standard library with the same text."""
    assert jsonbytes.row_text(value) == jsonbytes.dumps(value, _old_row_default).decode()


def test_row_text_keeps_microseconds_and_writes_a_whole_second_as_isoformat_does() -> None:
    whole = dt.datetime(2026, 11, 25, 3, 8, 40, tzinfo=dt.UTC)
    fine = whole.replace(microsecond=30515)
    text = jsonbytes.row_text([{"a": whole, "b": fine, "big": BIG}])
    assert json.loads(text) == [{"a": whole.isoformat(), "b": fine.isoformat(), "big": BIG}]


def _answered(answer_with):
    """An APIView of the project's defaults (renderer, negotiation) answering ``answer_with``."""
    from rest_framework.test import APIRequestFactory
    from rest_framework.views import APIView

    class View(APIView):
        authentication_classes: list[type] = []
        permission_classes: list[type] = []
        throttle_classes: list[type] = []

        def post(self, request):
            return answer_with(SAMPLE, 201, {"Idempotent-Replayed": "true"})

    request = APIRequestFactory().post("/x", {}, format="json", HTTP_ACCEPT="text/html")
    response = View.as_view()(request)
    if hasattr(response, "render"):
        response.render()
    return response


def test_json_response_answers_what_drf_s_response_answers() -> None:
    """The posting endpoints answer with ``json_response``: the same status, headers and
    bytes as DRF's ``Response`` once the view has finalized and rendered it."""
    from rest_framework.response import Response

    from ledgerproject.api.renderers import json_response

    theirs = _answered(lambda body, status, headers: Response(body, status, headers=headers))
    ours = _answered(json_response)
    assert ours.status_code == theirs.status_code == 201
    assert dict(ours.headers) == dict(theirs.headers)
    assert ours["Content-Type"] == "application/json"
    assert ours.content == theirs.content


def test_a_throttle_s_cache_is_the_shared_one_unless_one_is_set() -> None:
    from django.core.cache import caches

    from ledgerproject.api.throttling import TokenRateThrottle

    throttle = TokenRateThrottle()
    assert throttle.cache is caches["throttle"]
    mine = object()
    throttle.cache = mine
    assert throttle.cache is mine


def test_no_column_holds_a_time_of_day() -> None:
    """``row_text`` leaves times of day to orjson, which writes some wrongly (3.13.0 writes
    ``time(0, 0, 0, 10000)`` as ``00:00:00.10000``): no model may have such a column until
    ``row_text`` writes them itself."""
    from django.apps import apps
    from django.db import models

    timed = [
        f"{model._meta.label}.{field.name}"
        for model in apps.get_models()
        for field in model._meta.concrete_fields
        if isinstance(field, models.TimeField)
    ]
    assert timed == []
