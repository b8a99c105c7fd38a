"""The account's change form in the admin gains its overdraft limit, typed as a decimal
(``25.50``: amount 2550 at scale 2), written by ``account_update`` like every other change, so
the admin refuses what the API refuses (lowering the limit below the current overdraft, 0008;
external accounts, 0074)."""

from __future__ import annotations

import re
from typing import Any

from django import forms

from ledgerproject.amounts import format_amount

DECIMAL = re.compile(r"^(\d{1,38})(?:\.(\d{1,18}))?$")


class AccountForm(forms.ModelForm):
    """The base of the admin's account form (the admin supplies the model and fields)."""

    overdraft_limit = forms.CharField(
        required=False,
        max_length=60,
        help_text="How far below zero the available balance may go, e.g. 250.00 (0: not at all).",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        balance = getattr(self.instance, "balance", None) if self.instance.pk else None
        if balance is not None and not balance.is_external:
            self.initial["overdraft_limit"] = format_amount(balance.overdraft_limit, balance.scale)

    def clean_overdraft_limit(self) -> dict[str, int] | None:
        text = (self.cleaned_data.get("overdraft_limit") or "").strip()
        if not text:
            return None
        match = DECIMAL.match(text)
        if match is None:
            raise forms.ValidationError("A non-negative decimal amount, such as 250.00.")
        whole, fraction = match.group(1), match.group(2) or ""
        return {"amount": int(whole + fraction), "scale": len(fraction)}
