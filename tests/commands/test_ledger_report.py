"""ledger_report: balances per account and asset, a rich table on a terminal, plain text
otherwise."""

from __future__ import annotations

from tests.commands.helpers import run, scope


def test_it_prints_balances_as_plain_text(book):
    book.fund("@alice", 100_000)
    book.pay(2500, 100)
    book.account("@idle")
    out, _ = run("ledger_report", *scope(book))
    lines = out.splitlines()
    assert lines[0].startswith("Ledger Main (") and lines[0].endswith(") of Acme")
    assert lines[1].split() == ["asset", "account", "type", "available", "on", "hold", "status"]
    rows = {line.split()[1]: line.split() for line in lines[3:] if line.startswith("BRL ")}
    assert rows["@alice"][3:5] == ["974.00", "0.00"]
    assert rows["@bob"][3] == "25.00" and rows["@fees/platform"][3] == "1.00"
    assert rows["@external/BRL"][2:4] == ["external", "-1000.00"]
    assert rows["@idle"][3] == "0" and rows["@idle"][5] == "ACTIVE"
    assert "BRL: 1000.00 held by non-external accounts" in out
    assert "\x1b[" not in out  # no terminal codes in a pipe


def test_it_draws_a_rich_table_on_a_terminal(book):
    book.fund("@alice", 5_000)
    out, _ = run("ledger_report", *scope(book), tty=True)
    assert "┃" in out or "│" in out
    assert "@alice" in out and "50.00" in out


def test_it_filters_by_asset_and_hides_deleted_accounts(book):
    idle = book.account("@idle")
    book.api.delete(f"{book.url}/accounts/{idle['id']}")
    out, _ = run("ledger_report", *scope(book))
    assert "@idle" not in out
    assert "@idle" in run("ledger_report", *scope(book), "--deleted")[0]
    assert "(no accounts)" in run("ledger_report", *scope(book), "--asset", "USD")[0]
