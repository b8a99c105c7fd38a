"""The range of every amount and balance the ledger holds, and the one place it is decided.

Amounts are integers with a scale, never floats. An integer may have up to ``MAX_DIGITS``
significant digits (PostgreSQL ``numeric(38, 0)``), so a balance that has grown to the largest
scale (18) still holds 10**20 whole units, and a sum of many balances (a chart, an integrity
check) is computed exactly, never in 64-bit arithmetic that can overflow."""

from __future__ import annotations

MAX_DIGITS = 38
MAX_AMOUNT = 10**MAX_DIGITS - 1


def in_range(value: int) -> bool:
    return -MAX_AMOUNT <= value <= MAX_AMOUNT
