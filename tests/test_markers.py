"""``make stress`` runs ``pytest -m "slow or postgres"``: it must collect every race test, and
every test that skips on SQLite must carry the ``postgres`` mark (else the stress run would
miss it). Proved by collecting, not by reading the marks."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _collected(*args: str) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "--collect-only", "-p", "no:cacheprovider", *args],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return [line for line in result.stdout.splitlines() if "::" in line]


def test_make_stress_collects_every_race_test():
    races = _collected("tests/concurrency")
    stressed = _collected("-m", "slow or postgres", "tests/concurrency")
    assert len(races) >= 12
    assert stressed == races


def _postgres_only_tests() -> set[str]:
    """Tests (or whole modules) that skip unless the database is PostgreSQL."""
    found = set()
    for path in (ROOT / "tests").rglob("test_*.py"):
        text = path.read_text()
        if 'vendor != "postgresql"' in text and "pytestmark" in text.split("def ")[0]:
            tests = [n.name for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)]
            found.update(f"{path.relative_to(ROOT)}::{name}" for name in tests
                         if name.startswith("test_"))  # fmt: skip
    return found


def test_every_postgres_only_module_is_collected_by_make_stress():
    stressed = {line.split("[")[0] for line in _collected("-m", "slow or postgres")}
    assert len(_postgres_only_tests()) > 10
    missing = sorted(t for t in _postgres_only_tests() if t not in stressed)
    assert missing == []
