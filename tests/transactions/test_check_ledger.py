"""check_ledger: passes on a healthy ledger and names each kind of violation."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from organizations.models import Balance
from transactions.models import Transaction


def _run(*args):
    out, err = io.StringIO(), io.StringIO()
    call_command("check_ledger", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def _busy(book):
    book.fund("@alice", 5_000)
    book.pay(100, 5)
    held = book.pay(200, 10, pending=True).json()
    book.api.post(f"{book.url}/transactions/{held['id']}/commit")
    canceled = book.pay(300, 0, pending=True).json()
    book.api.post(f"{book.url}/transactions/{canceled['id']}/cancel")
    sent = book.pay(50, 0).json()
    book.api.post(f"{book.url}/transactions/{sent['id']}/revert")
    book.pay(10, 1, pending=True)


def test_it_passes_on_a_busy_healthy_ledger(book):
    _busy(book)
    out, _ = _run()
    assert "OK: 1 ledger(s) checked" in out


def test_it_filters_by_organization_and_ledger(book, ledger):
    _busy(book)
    out, _ = _run("--organization", ledger["organizationId"], "--ledger", ledger["id"])
    assert "OK: 1 ledger(s)" in out
    with pytest.raises(CommandError):
        _run("--ledger", "not-a-uuid")


def test_it_names_a_balance_that_drifted_from_its_statement(book, books_left_unbalanced):
    _busy(book)
    Balance.objects.filter(account__alias="@bob").update(available=1)
    err = io.StringIO()
    with pytest.raises(CommandError, match=r"violation\(s\) in 1 ledger"):
        call_command("check_ledger", stdout=io.StringIO(), stderr=err)
    assert "@bob: statement" in err.getvalue()


def test_it_names_each_violation(book, books_left_unbalanced):
    _busy(book)
    Balance.objects.filter(account__alias="@bob").update(available=999_999)
    Transaction.objects.filter(status="PRE_APPROVED").update(status="SENT")
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command("check_ledger", stdout=io.StringIO(), stderr=err)
    text = err.getvalue()
    assert "@bob: statement" in text
    assert "sum to" in text
    assert "moved 0, amount is" in text
