"""export_templates without a folder: its documented default, one folder per ledger, which the
repository ignores, so an export from a checkout never shows up as files to commit."""

from __future__ import annotations

import subprocess
from pathlib import Path

from organizations.models import Ledger
from tests.commands.helpers import run, scope

ROOT = Path(__file__).resolve().parents[2]


def test_export_without_a_folder_writes_to_the_ignored_default(book, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out, _ = run("export_templates", *scope(book))
    ledger = Ledger.objects.get(pk=book.url.rsplit("/", 1)[-1])
    folder = Path("exported-templates") / str(ledger.pk)
    assert f"OK: 3 template(s) written to {folder}." in out
    written = sorted(p.name for p in (tmp_path / folder).iterdir())
    assert written == ["FUND.tmpl", "PAYMENT_HELD.tmpl", "PAYMENT_WITH_FEE.tmpl"]
    ignored = subprocess.run(
        ["git", "check-ignore", "--no-index", str(folder / written[0])],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert ignored.returncode == 0, ignored.stderr or "the export would be committed"
