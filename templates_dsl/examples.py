"""Templates to start from, shown on the back office's template page and posted by
``bootstrap_demo``: one ``.tmpl`` file each in ``templates_dsl/examples/``, checked by the tests
(each compiles)."""

from __future__ import annotations

from pathlib import Path

EXAMPLES_DIR = Path(__file__).resolve().parent / "examples"


def examples() -> dict[str, str]:
    """Each example's text by its file's name (``payment_with_fee``), in name order."""
    return {path.stem: path.read_text() for path in sorted(EXAMPLES_DIR.glob("*.tmpl"))}
