"""The range and the text form of every amount and balance the ledger holds: the one place
both are decided.

Amounts are integers with a scale, never floats. An integer may have up to ``MAX_DIGITS``
significant digits (PostgreSQL ``numeric(38, 0)``), so a balance that has grown to the largest
scale (18) still holds 10**20 whole units, and a sum of many balances (a chart, an integrity
check) is computed exactly, never in 64-bit arithmetic that can overflow."""

from __future__ import annotations

MAX_DIGITS = 38
MAX_AMOUNT = 10**MAX_DIGITS - 1


def rescale(value: int, from_scale: int, to_scale: int) -> int:
    """``value`` at ``from_scale`` written at ``to_scale`` (never smaller: no rounding)."""
    return value * 10 ** (to_scale - from_scale)


def in_range(value: int) -> bool:
    return -MAX_AMOUNT <= value <= MAX_AMOUNT


def format_amount(value: int, scale: int, asset: str = "") -> str:
    """``94800, 2, "BRL"`` -> ``"948.00 BRL"``: exact, with the scale's digits."""
    sign, digits = ("-" if value < 0 else ""), str(abs(value)).rjust(scale + 1, "0")
    text = f"{sign}{digits[:-scale]}.{digits[-scale:]}" if scale else f"{sign}{digits}"
    return f"{text} {asset}".rstrip()


def format_balance(available: int, on_hold: int, scale: int, asset: str = "") -> str:
    """``"948.00 BRL"``, or ``"948.00 BRL (+25.00 on hold)"`` when something is on hold."""
    text = format_amount(available, scale, asset)
    return f"{text} (+{format_amount(on_hold, scale, asset)} on hold)" if on_hold else text
