"""Closed periods: a ledger closes its books through a day (``closedThrough``, in its time
zone); nothing effective on or before it is written (422 0124), whichever way it would be
written; a period closes once it is over; reopening needs an unrestricted token or a staff
permission of its own, and is an event like every change (docs/TIME.md)."""

from __future__ import annotations

import datetime as dt
import uuid
import zoneinfo

import pytest
from django.utils import timezone

from organizations.models import Ledger
from outbox.models import Event
from tests.admin.helpers import save_confirmed, staff_client
from tests.conftest import Api, make_token
from tests.transactions.conftest import payment
from tests.transactions.test_inline import TEXT
from transactions.models import Transaction

pytestmark = pytest.mark.django_db

UTC = dt.UTC


def _days_ago(days: int) -> dt.date:
    return timezone.now().date() - dt.timedelta(days=days)


def _close(book, day, api: Api | None = None) -> object:
    return (api or book.api).patch(
        book.url, {"closedThrough": None if day is None else day.isoformat()}
    )


def _at(day: dt.date, hour: int = 12, tz: dt.tzinfo = UTC) -> str:
    return dt.datetime.combine(day, dt.time(hour), tzinfo=tz).isoformat()


def _assert_closed(response, day: dt.date) -> None:
    assert response.status_code == 422, response.content
    body = response.json()
    assert body["code"] == "0124"
    assert day.isoformat() in body["description"]


def test_a_ledger_closes_a_period_that_is_over(book):
    fresh = book.api.get(book.url).json()
    assert (fresh["closedThrough"], fresh["timeZone"]) == (None, "UTC")
    through = _days_ago(3)
    closed = _close(book, through)
    assert closed.status_code == 200, closed.content
    assert closed.json()["closedThrough"] == through.isoformat()
    event = Event.objects.filter(type="ledger.updated").latest("seq")
    assert event.data["closedThrough"] == through.isoformat()
    for day in (timezone.now().date(), timezone.now().date() + dt.timedelta(days=2)):
        refused = _close(book, day)
        assert refused.status_code == 400, refused.content
        assert refused.json()["fields"] == {"closedThrough": "not over yet"}
    bad_zone = book.api.patch(book.url, {"timeZone": "Mars/Olympus"})
    assert bad_zone.status_code == 400 and bad_zone.json()["fields"] == {
        "timeZone": "not a time zone"
    }


def test_nothing_effective_in_a_closed_period_is_written(book):
    book.fund("@alice", 100_000)
    through = _days_ago(3)
    assert _close(book, through).status_code == 200
    before = Transaction.objects.count()

    _assert_closed(book.pay(100, 0, effectiveAt=_at(through, 23)), through)
    _assert_closed(book.pay(100, 0, effectiveAt=_at(through - dt.timedelta(days=40))), through)
    dsl = book.api.post(f"{book.url}/transactions/dsl", {"dsl": TEXT, "effectiveAt": _at(through)})
    _assert_closed(dsl, through)
    dry = book.api.post(
        f"{book.url}/transactions?dryRun=true", {**payment(1, 0), "effectiveAt": _at(through)}
    )
    _assert_closed(dry, through)
    atomic = book.api.post(
        f"{book.url}/transactions/batch",
        {"transactions": [payment(1, 0), {**payment(1, 0), "effectiveAt": _at(through)}]},
    )
    _assert_closed(atomic, through)
    assert atomic.json()["fields"]["index"] == "1"
    assert Transaction.objects.count() == before

    each = book.api.post(
        f"{book.url}/transactions/batch",
        {"atomic": False,
         "transactions": [payment(1, 0), {**payment(1, 0), "effectiveAt": _at(through)}]},
    )  # fmt: skip
    assert each.status_code == 200, each.content
    first, second = each.json()
    assert (first["status"], second["status"]) == (201, 422)
    assert second["error"]["code"] == "0124"

    # The first moment of the day after is open.
    opens = dt.datetime.combine(through + dt.timedelta(days=1), dt.time.min, tzinfo=UTC)
    assert book.pay(100, 0, effectiveAt=opens.isoformat()).status_code == 201
    assert book.pay(100, 0).status_code == 201  # and now, of course


def test_the_period_ends_at_midnight_in_the_ledger_s_time_zone(book):
    book.fund("@alice", 100_000)
    sao_paulo = zoneinfo.ZoneInfo("America/Sao_Paulo")  # UTC-3
    through = _days_ago(3)
    changed = book.api.patch(
        book.url, {"timeZone": "America/Sao_Paulo", "closedThrough": through.isoformat()}
    )
    assert changed.status_code == 200, changed.content
    assert changed.json()["timeZone"] == "America/Sao_Paulo"
    # 23:30 on the closed day in São Paulo is 02:30 UTC the day after: still closed.
    late = dt.datetime.combine(through, dt.time(23, 30), tzinfo=sao_paulo)
    _assert_closed(book.pay(100, 0, effectiveAt=late.isoformat()), through)
    early = dt.datetime.combine(through + dt.timedelta(days=1), dt.time(0, 30), tzinfo=sao_paulo)
    assert book.pay(100, 0, effectiveAt=early.isoformat()).status_code == 201


def test_commits_reverts_and_cancels_into_a_closed_period_are_refused(book):
    book.fund("@alice", 100_000)
    through = _days_ago(3)
    sent = book.pay(1_000, 0, effectiveAt=_at(through - dt.timedelta(days=2))).json()
    held = book.post(
        {**payment(500, 0), "transactionTypeCode": "PAYMENT_HELD",
         "effectiveAt": _at(through - dt.timedelta(days=1))}
    ).json()  # fmt: skip
    other = book.post({**payment(300, 0), "transactionTypeCode": "PAYMENT_HELD"}).json()
    assert _close(book, through).status_code == 200
    tx_url = f"{book.url}/transactions"
    closed_day = {"effectiveAt": _at(through)}

    _assert_closed(book.api.post(f"{tx_url}/{held['id']}/commit", closed_day), through)
    _assert_closed(book.api.post(f"{tx_url}/{held['id']}/cancel", closed_day), through)
    _assert_closed(book.api.post(f"{tx_url}/{sent['id']}/revert", closed_day), through)
    _assert_closed(
        book.api.post(f"{tx_url}/{other['id']}/commit", {"effectiveAt": _at(through, 1)}), through
    )
    # A revert of a transaction in the closed period posts now, in the open period, and points
    # at the original.
    reverted = book.api.post(f"{tx_url}/{sent['id']}/revert")
    assert reverted.status_code == 201, reverted.content
    reversal = reverted.json()
    assert reversal["parentTransactionId"] == sent["id"]
    assert reversal["effectiveAt"] == reversal["createdAt"]
    committed = book.api.post(f"{tx_url}/{held['id']}/commit")
    assert committed.status_code == 200, committed.content
    settled = [op for op in committed.json()["operations"] if op["effect"] == "SETTLE"]
    assert settled[0]["effectiveAt"] > _at(through, 23)


def test_reopening_needs_an_unrestricted_token(book, organization):
    through = _days_ago(5)
    assert _close(book, through).status_code == 200
    limited = Api(make_token("limited", organization_ids=[uuid.UUID(organization["id"])]))
    later = _close(book, through + dt.timedelta(days=1), limited)
    assert later.status_code == 200, later.content  # closing further needs no more than that
    for day in (through, None):
        refused = _close(book, day, limited)
        assert refused.status_code == 403, refused.content
        assert refused.json()["code"] == "0043"
    assert Ledger.objects.get().closed_through == through + dt.timedelta(days=1)
    west = book.api.patch(book.url, {"timeZone": "Pacific/Pago_Pago"})  # UTC-11: later
    assert west.status_code == 200, west.content
    east = limited.patch(book.url, {"timeZone": "Pacific/Kiritimati"})  # UTC+14: earlier
    assert east.status_code == 403, east.content

    reopened = _close(book, through)
    assert reopened.status_code == 200, reopened.content
    event = Event.objects.filter(type="ledger.updated").latest("seq")
    assert event.data["closedThrough"] == through.isoformat()
    assert (event.actor_kind, event.actor_name) == ("token", "root")
    assert _close(book, None).json()["closedThrough"] is None


def test_staff_close_and_reopen_in_the_admin(book):
    ledger = Ledger.objects.get()
    url = f"/admin/organizations/ledger/{ledger.pk}/change/"
    form = {
        "name": ledger.name,
        "status_code": ledger.status_code,
        "status_description": ledger.status_description or "",
        "time_zone": "UTC",
        "metadata": "{}",
        "reason": "Month end",
    }
    clerk = staff_client("organizations.view_ledger", "organizations.change_ledger")
    through = _days_ago(2)
    closed = save_confirmed(clerk, url, {**form, "closed_through": through.isoformat()})
    assert closed.status_code == 302, closed.content.decode()[:2000]
    assert Ledger.objects.get().closed_through == through
    refused = save_confirmed(clerk, url, {**form, "closed_through": ""})
    assert refused.status_code == 200
    assert "0043" in refused.content.decode()
    assert Ledger.objects.get().closed_through == through

    controller = staff_client(
        "organizations.view_ledger",
        "organizations.change_ledger",
        "organizations.reopen_period",
        username="controller",
    )
    reopened = save_confirmed(controller, url, {**form, "closed_through": ""})
    assert reopened.status_code == 302
    assert Ledger.objects.get().closed_through is None
    event = Event.objects.filter(type="ledger.updated").latest("seq")
    assert (event.actor_kind, event.actor_name) == ("staff", "controller")
