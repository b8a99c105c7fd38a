"""The bounds on untrusted template text and posting variables, and the one place they live.

Each bound keeps one request's work small and linear: the text is refused before it is parsed,
a template declaring too many names or legs is refused at save (line and column of the first
one past the limit), and a posting naming more variables than any template may declare is
refused before any of them is looked at. docs/SECURITY.md lists them with what each protects.
"""

from __future__ import annotations

MAX_TEMPLATE_BYTES = 65_536
"""Template text, UTF-8 encoded."""

MAX_VARIABLES = 200
"""Distinct ``$names`` a template declares (amounts and accounts), and names a posting's
``variables`` object may hold."""

MAX_LEGS = 200
"""``from`` and ``to`` entries of a template, the remaining destination included."""

MAX_HOLD_SECONDS = 31_622_400
"""A template's ``(hold-duration <seconds>)``: at most 366 days."""
