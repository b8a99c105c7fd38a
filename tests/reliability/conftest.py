"""Shared by the reliability tests: the ``book`` fixture, real-thread helpers, and how long to
run. ``LEDGER_STRESS=1`` (``make stress``) turns every bounded figure up."""

from __future__ import annotations

import os

from tests.concurrency.conftest import run_threads
from tests.transactions.conftest import Book, book  # noqa: F401 - the fixture, re-exported

STRESS = os.environ.get("LEDGER_STRESS", "").strip().lower() in {"1", "true", "yes", "on"}


# The collection a path parameter names (the segment before it) -> the key of the resource.
RESOURCE_OF_SEGMENT = {
    "organizations": "organization",
    "ledgers": "ledger",
    "accounts": "account",
    "alias": "alias",
    "portfolios": "portfolio",
    "products": "product",
    "instruments": "instrument",
    "instrument-rates": "rate",
    "asset-rates": "rate",
    "transactions": "transaction",
    "transaction-templates": "template",
    "transaction-types": "template",
    "webhooks": "webhook",
    "scheduled-postings": "scheduled",
    "balance-monitors": "monitor",
}


def scaled(normal: int, stress: int) -> int:
    """``normal`` in ``.ci/run``, ``stress`` under ``make stress``."""
    return stress if STRESS else normal


def scaled_seconds(normal: float, stress: float) -> float:
    return stress if STRESS else normal


__all__ = ["RESOURCE_OF_SEGMENT", "STRESS", "Book", "run_threads", "scaled", "scaled_seconds"]
