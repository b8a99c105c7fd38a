"""The range and the text form of every amount and balance the ledger holds: the one place
both are decided.

Amounts are integers with a scale, never floats. An integer may have up to ``MAX_DIGITS``
significant digits (PostgreSQL ``numeric(38, 0)``), so a balance that has grown to the largest
scale (18) still holds 10**20 whole units, and a sum of many balances (a chart, an integrity
check) is computed exactly, never in 64-bit arithmetic that can overflow."""

from __future__ import annotations

import re

DIGITS = re.compile(r"[0-9]+")
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


def parse_amount(text: str, scale: int, asset: str = "") -> int:
    """``"25.00", 2`` -> ``2500``: what a person types, as an integer at ``scale``, exactly.

    The inverse of ``format_amount``: digits with at most ``scale`` decimals after a point
    (``25``, ``25.5`` and ``25.00`` are all 2500 at scale 2), optionally followed by ``asset``.
    No sign, exponent, grouping or float on the way; a value it refuses raises ``ValueError``
    with a sentence for the person who typed it."""
    value = text.strip()
    if asset and value.upper().endswith(asset.upper()):
        value = value[: -len(asset)].strip()
    whole, point, fraction = value.partition(".")
    example = format_amount(2500 * 10**scale // 100, scale, asset) if scale >= 2 else "25"
    if not DIGITS.fullmatch(whole) or (point and not DIGITS.fullmatch(fraction)):
        raise ValueError(f"Enter an amount such as {example}, not {text!r}.")
    if len(fraction) > scale:
        raise ValueError(f"At most {scale} decimal(s) for this amount, not {text!r}.")
    number = int(whole + fraction.ljust(scale, "0"))
    if number > MAX_AMOUNT:
        raise ValueError(f"{text!r} is larger than the ledger can hold.")
    return number
