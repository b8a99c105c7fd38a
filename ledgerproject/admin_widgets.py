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
    """How a stored value is shown: text as it is, unless it would read as something else (a
    number, a boolean, quoted text) or a text box would lose part of it (spaces at either end,
    a line break); then quoted."""
    if isinstance(value, str):
        plain = _scalar(value) is None and value == value.strip() and not _BREAKS & set(value)
        return value if plain else json.dumps(value)
    return json.dumps(value)


_BREAKS = {"\n", "\r"}


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
        pairs = {key: _read(value) for key, value in zip(keys, values, strict=False) if key.strip()}
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
        stored = value if isinstance(value, dict) else _object(value)
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


def _object(text: Any) -> dict[str, Any]:
    """The address a posted text holds, or nothing (text that is not a JSON object)."""
    try:
        value = json.loads(text or "{}")
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


# The longest each part may be, as the API has them.
ADDRESS_LIMITS = {"line1": 256, "line2": 256, "zipCode": 32, "city": 128, "state": 128}


def _filled(address: Any) -> dict[str, Any]:
    """The parts that say something: an empty part is the same as none. (The form's hidden
    copy of the first value comes back as JSON text.)"""
    if isinstance(address, str):
        address = _object(address)
    if not isinstance(address, dict):
        return {}
    return {part: text for part, text in address.items() if text not in ("", None)}


class AddressField(forms.JSONField):
    """An address is whole, with its country, or empty; each part a text within the API's
    length, the country an ISO 3166-1 code. Stored parts left empty stay as stored."""

    widget = AddressWidget

    def clean(self, value: Any) -> Any:
        address = super().clean(value) or {}
        if not isinstance(address, dict):
            raise forms.ValidationError("An address is an object of its parts.")
        unknown = set(address) - {part for part, _ in ADDRESS_PARTS}
        if unknown:
            raise forms.ValidationError(f"Unknown parts: {', '.join(sorted(unknown))}.")
        for part, text in address.items():
            if text is not None and not isinstance(text, str):
                raise forms.ValidationError(f"The {part} is text.")
            if text and ("\x00" in text or len(text) > ADDRESS_LIMITS.get(part, 2)):
                raise forms.ValidationError(f"The {part} is too long or holds a NUL character.")
        country = address.get("country")
        if _filled(address) and not country:
            raise forms.ValidationError("An address names its country (or is left empty).")
        if country and pycountry.countries.get(alpha_2=country) is None:
            raise forms.ValidationError(f"{country} is not an ISO 3166-1 alpha-2 country code.")
        return address

    def has_changed(self, initial: Any, data: Any) -> bool:
        """An empty part and no part are the same address: a page saved unchanged writes
        nothing."""
        try:
            posted = self.to_python(data)
        except forms.ValidationError:
            return True
        return _filled(initial) != _filled(posted)
