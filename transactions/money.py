"""Scaled integers: an amount is an integer with a scale (``2500`` at scale 2 is 25.00), never a
float. Values of different scales are combined by rescaling exactly to the larger one; nothing
is ever rounded."""

from __future__ import annotations

from collections.abc import Iterable


def rescale(value: int, from_scale: int, to_scale: int) -> int:
    """``value`` at ``from_scale`` written at ``to_scale`` (never smaller: no rounding)."""
    return value * 10 ** (to_scale - from_scale)


def combine_scales(parts: Iterable[tuple[str, int, int]]) -> dict[str, tuple[int, int]]:
    """``(key, scale, value)`` parts -> ``{key: (sum at the largest scale, that scale)}``."""
    grouped: dict[str, list[tuple[int, int]]] = {}
    for key, scale, value in parts:
        grouped.setdefault(key, []).append((int(value), int(scale)))
    out = {}
    for key, items in grouped.items():
        top = max(scale for _, scale in items)
        out[key] = (sum(rescale(value, scale, top) for value, scale in items), top)
    return out
