"""import_templates and export_templates: per-file results with line and column, create or
update, all-or-nothing with --atomic, and a round trip through export."""

from __future__ import annotations

import pytest
from django.core.management import CommandError

from templates_dsl.management.commands.export_templates import file_name
from templates_dsl.models import TransactionTemplate
from tests.api.test_templates import SIMPLE
from tests.commands.helpers import attempt, run, scope
from tests.conftest import Api

BROKEN = SIMPLE.replace("(code SIMPLE)", "(code")
OTHER = SIMPLE.replace("SIMPLE", "OTHER")


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "a_simple.tmpl").write_text(SIMPLE)
    (tmp_path / "b_other.tmpl").write_text(OTHER)
    (tmp_path / "notes.txt").write_text("not a template")
    return tmp_path


def active(code):
    return TransactionTemplate.objects.filter(code=code, deleted_at__isnull=True)


def test_it_creates_then_leaves_then_updates(book, folder):
    out, _ = run("import_templates", str(folder), *scope(book))
    assert f"{folder}/a_simple.tmpl: created SIMPLE" in out
    assert f"{folder}/b_other.tmpl: created OTHER" in out
    assert "OK: 2 file(s) imported." in out and "notes.txt" not in out
    again, _ = run("import_templates", str(folder), *scope(book))
    assert "unchanged SIMPLE" in again and "unchanged OTHER" in again
    (folder / "b_other.tmpl").write_text(
        OTHER.replace("(code OTHER)", "(code OTHER) (pending true)")
    )
    updated, _ = run("import_templates", str(folder / "b_other.tmpl"), *scope(book))
    assert "updated OTHER" in updated
    assert active("OTHER").get().pending is True
    assert active("OTHER").count() == 1


def test_it_reports_each_file_with_its_position_and_exits_non_zero(book, folder):
    (folder / "c_broken.tmpl").write_text(BROKEN)
    (folder / "d_dup.tmpl").write_text(SIMPLE.replace("(send", "; a copy\n  (send"))
    (folder / "e_euro.tmpl").write_text(OTHER.replace("BRL", "EUR").replace("OTHER", "EURO"))
    out, _, error = attempt("import_templates", str(folder), *scope(book))
    assert error.returncode == 1 and "3 of 5 file(s) failed" in str(error)
    assert f"{folder}/a_simple.tmpl: created SIMPLE" in out
    assert f"{folder}/c_broken.tmpl: FAILED 0017 line 4, column 3: unexpected" in out
    assert f"d_dup.tmpl: FAILED the code SIMPLE is also defined in {folder}/a_simple.tmpl" in out
    assert "e_euro.tmpl: FAILED 0017 line 4, column" in out and "EUR does not exist" in out
    assert active("SIMPLE").exists() and active("OTHER").exists()  # the valid ones went in


def test_atomic_writes_nothing_when_one_file_fails(book, folder):
    (folder / "c_broken.tmpl").write_text(BROKEN)
    out, _, error = attempt("import_templates", str(folder), *scope(book), "--atomic")
    assert "nothing was written" in str(error) and "c_broken.tmpl: FAILED 0017" in out
    assert not active("SIMPLE").exists() and not active("OTHER").exists()
    (folder / "c_broken.tmpl").unlink()
    out, _ = run("import_templates", str(folder), *scope(book), "--atomic")
    assert "would create SIMPLE" in out
    assert "OK: 2 file(s) imported; every change above was written" in out
    assert active("SIMPLE").exists()


def test_atomic_says_would_update_then_that_nothing_was_written(book, folder):
    run("import_templates", str(folder), *scope(book))
    (folder / "b_other.tmpl").write_text(
        OTHER.replace("(code OTHER)", "(code OTHER) (pending true)")
    )
    (folder / "c_broken.tmpl").write_text(BROKEN)
    out, _, error = attempt("import_templates", str(folder), *scope(book), "--atomic")
    assert f"{folder}/b_other.tmpl: would update OTHER" in out and "updated" not in out
    assert "1 of 3 file(s) failed; nothing was written (--atomic)." in str(error)
    assert active("OTHER").get().pending is False


def test_dry_run_checks_and_writes_nothing(book, folder):
    out, _ = run("import_templates", str(folder), *scope(book), "--dry-run")
    assert "would create SIMPLE" in out and "nothing was written (--dry-run)" in out
    assert not active("SIMPLE").exists()


def test_it_refuses_bad_paths_and_ledgers(book, folder, tmp_path, api):
    with pytest.raises(CommandError, match="neither a file nor a folder"):
        run("import_templates", str(folder / "missing"), *scope(book))
    (tmp_path / "empty").mkdir()
    with pytest.raises(CommandError, match=r"No \.tmpl files"):
        run("import_templates", str(tmp_path / "empty"), *scope(book))
    with pytest.raises(CommandError, match="must be a UUID"):
        run("import_templates", str(folder), "--organization", "x", "--ledger", "y")
    other = api.post("/v1/organizations", {"legalName": "Other", "legalDocument": "2"}).json()
    ledger_id = scope(book)[3]
    with pytest.raises(CommandError, match="No ledger"):
        run("import_templates", str(folder), "--organization", other["id"], "--ledger", ledger_id)


def test_it_shows_a_progress_bar_on_a_terminal(book, folder):
    out, _ = run("import_templates", str(folder), *scope(book), tty=True)
    assert "created SIMPLE" in out and "created OTHER" in out and "OK: 2 file(s)" in out


def test_export_then_import_round_trips(book, tmp_path, api: Api):
    out, _ = run("export_templates", *scope(book), str(tmp_path / "out"))
    assert "OK: 3 template(s) written" in out
    files = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert files == ["FUND.tmpl", "PAYMENT_HELD.tmpl", "PAYMENT_WITH_FEE.tmpl"]
    for template in TransactionTemplate.objects.all():
        assert (tmp_path / "out" / f"{template.code}.tmpl").read_text() == template.text

    org = api.post("/v1/organizations", {"legalName": "Copy", "legalDocument": "3"}).json()
    url = f"/v1/organizations/{org['id']}/ledgers"
    ledger = api.post(url, {"name": "Copy"}).json()
    api.post(
        f"{url}/{ledger['id']}/instruments", {"name": "Real", "type": "currency", "code": "BRL"}
    )
    target = ["--organization", org["id"], "--ledger", ledger["id"]]
    imported, _ = run("import_templates", str(tmp_path / "out"), *target, "--atomic")
    assert imported.count(": would create ") == 3 and "was written" in imported
    assert TransactionTemplate.objects.filter(ledger_id=ledger["id"]).count() == 3


def test_export_can_write_the_canonical_layout(book, tmp_path):
    run("export_templates", *scope(book), str(tmp_path), "--canonical", tty=True)
    text = (tmp_path / "FUND.tmpl").read_text()
    assert text.startswith("(transaction-template v1")
    assert file_name("A/B") == "A%2FB.tmpl" and file_name("50%") == "50%25.tmpl"
