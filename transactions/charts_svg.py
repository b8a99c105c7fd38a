"""Server-side SVG bar charts for the admin dashboard: plain markup, no script, no CDN.

A chart is a list of ``Bar`` (a label, a length in any unit, the text to show); the SVG scales
the lengths to the drawing. Labels are escaped; nothing from the database reaches the markup
unescaped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

PALETTE = ("#417690", "#79aec8", "#e0a458", "#5b8c5a", "#c2574b", "#8e6c8a")
FONT = "font-family='system-ui, sans-serif' font-size='11'"


@dataclass(frozen=True)
class Bar:
    label: str
    value: float
    text: str
    color: str | None = None


def _empty(width: int, height: int, title: str) -> SafeString:
    return mark_safe(
        f"<svg xmlns='http://www.w3.org/2000/svg' role='img' width='{width}' height='{height}' "
        f"viewBox='0 0 {width} {height}' aria-label='{escape(title)}: no data'>"
        f"<text x='{width // 2}' y='{height // 2}' text-anchor='middle' {FONT} fill='#777'>"
        "no data</text></svg>"
    )


def horizontal_bars(bars: Sequence[Bar], *, title: str, width: int = 360) -> SafeString:
    """One row per bar: the label on the left, the bar, and its text at the bar's end."""
    row, label_w, text_w = 26, 110, 90
    height = max(row * len(bars) + 10, 60)
    if not bars:
        return _empty(width, height, title)
    top = max((b.value for b in bars), default=0) or 1
    span = width - label_w - text_w
    parts = [
        f"<svg xmlns='http://www.w3.org/2000/svg' role='img' width='{width}' height='{height}' "
        f"viewBox='0 0 {width} {height}' aria-label='{escape(title)}'>"
    ]
    for i, bar in enumerate(bars):
        y = 5 + i * row
        length = max(bar.value / top * span, 0) if bar.value > 0 else 0
        color = bar.color or PALETTE[i % len(PALETTE)]
        parts.append(
            f"<g><title>{escape(bar.label)}: {escape(bar.text)}</title>"
            f"<text x='{label_w - 6}' y='{y + 15}' text-anchor='end' {FONT}>"
            f"{escape(bar.label)}</text>"
            f"<rect x='{label_w}' y='{y + 3}' width='{length:.1f}' height='{row - 8}' "
            f"fill='{color}' rx='2'/>"
            f"<text x='{label_w + length + 5:.1f}' y='{y + 15}' {FONT}>{escape(bar.text)}</text>"
            "</g>"
        )
    parts.append("</svg>")
    return mark_safe("".join(parts))


def vertical_bars(
    bars: Sequence[Bar],
    *,
    title: str,
    width: int = 640,
    height: int = 180,
    tick: Callable[[str], str] = str,
) -> SafeString:
    """One column per bar (days, usually), labelled below every few columns."""
    if not bars:
        return _empty(width, height, title)
    tallest = max(bars, key=lambda b: b.value)
    # The axis is labelled with the tallest bar's own text, and made wide enough for it.
    left, bottom, top_pad = max(30, 6 * len(tallest.text) + 8), 22, 14
    plot_h = height - bottom - top_pad
    top = tallest.value or 1
    step = (width - left) / len(bars)
    every = max(1, round(len(bars) / 8))
    parts = [
        f"<svg xmlns='http://www.w3.org/2000/svg' role='img' width='{width}' height='{height}' "
        f"viewBox='0 0 {width} {height}' aria-label='{escape(title)}'>",
        f"<line x1='{left}' y1='{top_pad + plot_h}' x2='{width}' y2='{top_pad + plot_h}' "
        "stroke='#999'/>",
        f"<text x='{left - 4}' y='{top_pad + 4}' text-anchor='end' {FONT}>"
        f"{escape(tallest.text)}</text>",
        f"<text x='{left - 4}' y='{top_pad + plot_h}' text-anchor='end' {FONT}>0</text>",
    ]
    for i, bar in enumerate(bars):
        h = bar.value / top * plot_h if bar.value > 0 else 0
        x = left + i * step
        parts.append(
            f"<g><title>{escape(bar.label)}: {escape(bar.text)}</title>"
            f"<rect x='{x + 1:.1f}' y='{top_pad + plot_h - h:.1f}' width='{max(step - 2, 1):.1f}' "
            f"height='{h:.1f}' fill='{bar.color or PALETTE[0]}'/></g>"
        )
        if i % every == 0:
            parts.append(
                f"<text x='{x + step / 2:.1f}' y='{height - 6}' text-anchor='middle' {FONT}>"
                f"{escape(tick(bar.label))}</text>"
            )
    parts.append("</svg>")
    return mark_safe("".join(parts))
