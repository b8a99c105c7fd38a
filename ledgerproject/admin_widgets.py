"""Metadata and addresses edited as fields instead of raw JSON.

Metadata: a key and a value per row (the rows it has, then empty ones to add to).

A value reads as the JSON scalar it looks like, a number or ``true``/``false``, or else as text;
text that would read as one of those is shown in quotes (``"42"``), and quotes keep it text.
So what is shown and saved unchanged is exactly what was stored."""

from __future__ import annotations

import json
from typing import Any

import pycountry
from django import forms
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

# Empty rows below the stored ones: keys to add (save, and the page has three more).
EMPTY_ROWS = 3


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value) if _scalar(value) is not None else value
    return json.dumps(value)


def _scalar(text: str) -> Any:
    """The number, boolean or quoted text ``text`` is written as; None when it is plain text."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, bool | int | float | str) else None


def _read(text: str) -> Any:
    value = _scalar(text)
    return text if value is None else value


HELP = (
    "A key and its value per row; an empty key drops the row. A number, true or false is kept "
    'as one; quote it ("42") to keep it text.'
)


class MetadataWidget(forms.Widget):
    """Rendered here rather than from a template: the form renderer reads the apps' template
    folders only, and this is the project's."""

    def format_value(self, value: Any) -> list[tuple[str, str]]:
        if isinstance(value, str):
            try:
                value = json.loads(value) if value else {}
            except ValueError:
                return [("", value)]
        rows = [(str(key), _shown(item)) for key, item in (value or {}).items()]
        return rows + [("", "")] * EMPTY_ROWS

    def render(self, name: str, value: Any, attrs: Any = None, renderer: Any = None) -> SafeString:
        rows = format_html_join(
            "",
            '<tr><td><input type="text" name="{}__key" value="{}" maxlength="100" '
            'aria-label="key"></td><td><input type="text" name="{}__value" value="{}" size="40" '
            'aria-label="value"></td></tr>',
            ((name, key, name, text) for key, text in self.format_value(value)),
        )
        identifier = (attrs or {}).get("id", f"id_{name}")
        return format_html(
            '<table class="metadata-editor" id="{}"><thead><tr><th>Key</th><th>Value</th></tr>'
            '</thead><tbody>{}</tbody></table><p class="help">{}</p>',
            identifier,
            rows,
            HELP,
        )

    def value_from_datadict(self, data: Any, files: Any, name: str) -> Any:
        if f"{name}__key" not in data:  # posted as JSON (a script's, a test's): as it is
            return data.get(name)
        keys, values = data.getlist(f"{name}__key"), data.getlist(f"{name}__value")
        pairs = {
            key.strip(): _read(value.strip())
            for key, value in zip(keys, values, strict=False)
            if key.strip()
        }
        return json.dumps(pairs)

    def value_omitted_from_data(self, data: Any, files: Any, name: str) -> bool:
        return f"{name}__key" not in data and name not in data


# An address's parts, as the API names them, and their labels.
ADDRESS_PARTS = (
    ("line1", "Line 1"),
    ("line2", "Line 2"),
    ("zipCode", "Postal code"),
    ("city", "City"),
    ("state", "State"),
    ("country", "Country"),
)


class AddressWidget(forms.Widget):
    """An address as its parts, the country chosen from ISO 3166-1."""

    def render(self, name: str, value: Any, attrs: Any = None, renderer: Any = None) -> SafeString:
        stored = value if isinstance(value, dict) else json.loads(value or "{}")
        countries = sorted((c.alpha_2, c.name) for c in pycountry.countries)
        parts = []
        for part, label in ADDRESS_PARTS:
            field = f"{name}__{part}"
            if part == "country":
                options = format_html_join(
                    "",
                    '<option value="{}"{}>{} ({})</option>',
                    ((code, " selected" if stored.get(part) == code else "", country, code)
                     for code, country in countries),
                )  # fmt: skip
                control = format_html(
                    '<select name="{}" id="id_{}"><option value="">(none)</option>{}</select>',
                    field, field, options,
                )  # fmt: skip
            else:
                control = format_html(
                    '<input type="text" name="{}" id="id_{}" value="{}" maxlength="256">',
                    field, field, stored.get(part) or "",
                )  # fmt: skip
            parts.append(
                format_html('<p><label for="id_{}">{}</label> {}</p>', field, label, control)
            )
        return format_html(
            '<div class="address-editor">{}</div>',
            format_html_join("", "{}", ((p,) for p in parts)),
        )

    def value_from_datadict(self, data: Any, files: Any, name: str) -> Any:
        if f"{name}__country" not in data:  # posted as JSON: as it is
            return data.get(name)
        address = {part: data.get(f"{name}__{part}", "").strip() for part, _ in ADDRESS_PARTS}
        return json.dumps({part: text for part, text in address.items() if text})

    def value_omitted_from_data(self, data: Any, files: Any, name: str) -> bool:
        return f"{name}__country" not in data and name not in data


class AddressField(forms.JSONField):
    """An address is whole, with its country, or empty (as the API takes it)."""

    widget = AddressWidget

    def clean(self, value: Any) -> Any:
        address = super().clean(value) or {}
        if address and not address.get("country"):
            raise forms.ValidationError("An address names its country (or is left empty).")
        return address
