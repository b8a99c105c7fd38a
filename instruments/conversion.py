"""Conversions between two assets at the ledger's stored rates: which rate a posting converts at,
and the converted amount, exactly. docs/CONVERSIONS.md is the manual.

A rate ``BASE/COUNTER`` of ``amount`` at ``scale`` says one unit of BASE is worth
``amount / 10^scale`` units of COUNTER. A conversion from A to B uses the rate A/B (``DIRECT``)
or, when the ledger holds only B/A, that one's inverse (``INVERSE``), as it was at the
posting's effective time (``RateValue`` keeps every value a rate held). The converted amount is
the exact product, a fraction, rounded once to the target scale, half to even."""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from django.db.models import OuterRef, Q, Subquery

from instruments.models import Rate, RateValue
from ledgerproject.errors import ErrorCode, LedgerError
from ledgerproject.formats import render_timestamp
from organizations.models import Ledger

DIRECT, INVERSE = "DIRECT", "INVERSE"
MAX_TOLERANCE_BPS = 10_000  # 100 % of the expected rate
# A rate set INACTIVE by a PATCH takes part in no conversion, at any effective time: a status
# has no history to go back to. A deleted rate (INACTIVE too) still converts for a posting
# effective before its delete.
INACTIVE = "INACTIVE"
SHOWN = 10  # rates named in a refusal at most


@dataclass(frozen=True)
class RateTerms:
    """What a client asks of the rate (``rate`` in a posting's body): a rate pinned by id, and
    an expected value (units of the delivered asset per unit sent) with a tolerance in basis
    points of it."""

    rate_id: uuid.UUID | None = None
    expected_amount: int | None = None
    expected_scale: int = 0
    tolerance_bps: int = 0

    @property
    def expected(self) -> Fraction | None:
        if self.expected_amount is None:
            return None
        return Fraction(self.expected_amount, 10**self.expected_scale)

    def as_json(self) -> dict[str, Any]:
        """As the API takes it (``rate``), to keep with a scheduled posting."""
        expected = self.expected_amount
        return {
            "id": str(self.rate_id) if self.rate_id is not None else None,
            "expected": None if expected is None else {
                "amount": expected, "scale": self.expected_scale,
            },
            "toleranceBps": self.tolerance_bps,
        }  # fmt: skip

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> RateTerms | None:
        if not data:
            return None
        expected = data.get("expected") or {}
        rate_id = data.get("id")
        return cls(
            rate_id=uuid.UUID(str(rate_id)) if rate_id is not None else None,
            expected_amount=expected.get("amount"),
            expected_scale=expected.get("scale", 0),
            tolerance_bps=data.get("toleranceBps") or 0,
        )


@dataclass(frozen=True)
class ChosenRate:
    """The rate a conversion from ``from_code`` to ``to_code`` uses: the stored record and its
    value then, and whether it is applied as stored or inverted."""

    rate_id: uuid.UUID
    amount: int
    scale: int
    direction: str
    source: str
    valid_from: dt.datetime
    from_code: str
    to_code: str

    @property
    def value(self) -> Fraction:
        """Units of ``to_code`` per unit of ``from_code``, exactly."""
        stored = Fraction(self.amount, 10**self.scale)
        return stored if self.direction == DIRECT else 1 / stored

    def convert(self, amount: int, scale: int, to_scale: int) -> int:
        """``amount`` at ``scale`` of ``from_code`` in ``to_code`` at ``to_scale``: the exact
        product rounded half to even (``round`` of a ``Fraction``)."""
        return round(Fraction(amount * 10**to_scale, 10**scale) * self.value)

    def as_json(self) -> dict[str, Any]:
        """The record a converting transaction keeps: the stored rate as stored (its pair, as
        base and counter), its value then and since when, and which way it was applied."""
        direct = self.direction == DIRECT
        return {
            "id": str(self.rate_id),
            "baseAssetCode": self.from_code if direct else self.to_code,
            "counterAssetCode": self.to_code if direct else self.from_code,
            "amount": self.amount,
            "scale": self.scale,
            "source": self.source,
            "validFrom": render_timestamp(self.valid_from),
            "direction": self.direction,
        }


def choose_rate(
    ledger: Ledger,
    from_code: str,
    to_code: str,
    at: dt.datetime,
    *,
    source: str | None = None,
    terms: RateTerms | None = None,
) -> ChosenRate:
    """The rate in force at ``at`` for a conversion from ``from_code`` to ``to_code``: a rate of
    the pair (either way round) created by then, not deleted by then, with a value set by then;
    ``source``: only rates of that source; a pinned rate (``terms.rate_id``) must be one of
    them. The direct rate wins over an inverse one; two rates of the same direction are
    ambiguous (0129). Refused when none is in force (0126), when it is older than the ledger's
    ``max_rate_age`` (0127), or farther from the expected rate than the tolerance (0128)."""
    candidates = _in_force(ledger, from_code, to_code, at, source)
    if terms is not None and terms.rate_id is not None:
        candidates = [c for c in candidates if c.rate_id == terms.rate_id]
        if not candidates:
            raise _refusal(
                ErrorCode.RATE_NOT_FOUND,
                f"The rate {terms.rate_id} is not a rate of {from_code}/{to_code} (or "
                f"{to_code}/{from_code}) in force at {render_timestamp(at)}.",
                "rate.id",
            )
    direct = [c for c in candidates if c.direction == DIRECT]
    chosen = direct or candidates
    if not chosen:
        raise _refusal(
            ErrorCode.RATE_NOT_FOUND,
            f"No rate of {from_code}/{to_code} or {to_code}/{from_code}"
            + (f" from source '{source}'" if source is not None else "")
            + f" is in force at {render_timestamp(at)}.",
            "rate",
        )
    if len(chosen) > 1:
        sources = ", ".join(repr(c.source) for c in chosen[:SHOWN])
        raise _refusal(
            ErrorCode.AMBIGUOUS_RATE,
            f"{len(chosen)} rates of {chosen[0].from_code}/{chosen[0].to_code} are in force "
            f"(sources {sources}): name one with (rate-source ...) in the template, or pin one "
            "with rate.id.",
            "rate.id",
        )
    rate = chosen[0]
    _check_age(ledger, rate, at)
    if terms is not None and terms.expected is not None:
        _check_tolerance(rate, terms)
    return rate


def _in_force(
    ledger: Ledger, from_code: str, to_code: str, at: dt.datetime, source: str | None
) -> list[ChosenRate]:
    value = RateValue.objects.filter(
        organization_id=ledger.organization_id, rate_id=OuterRef("pk"), valid_from__lte=at
    ).order_by("-valid_from", "-id")
    rates = (
        Rate.objects.filter(organization_id=ledger.organization_id, ledger_id=ledger.pk)
        .filter(
            Q(base_code=from_code, counter_code=to_code)
            | Q(base_code=to_code, counter_code=from_code)
        )
        .filter(Q(deleted_at__isnull=True) | Q(deleted_at__gt=at), created_at__lte=at)
        .exclude(status_code=INACTIVE, deleted_at__isnull=True)
        .annotate(
            value_amount=Subquery(value.values("amount")[:1]),
            value_scale=Subquery(value.values("scale")[:1]),
            value_from=Subquery(value.values("valid_from")[:1]),
        )
        .filter(value_amount__isnull=False)
        .order_by("created_at", "id")
    )
    if source is not None:
        rates = rates.filter(source=source)
    return [
        ChosenRate(
            rate_id=rate.pk,
            amount=int(rate.value_amount),
            scale=int(rate.value_scale),
            direction=DIRECT if rate.base_code == from_code else INVERSE,
            source=rate.source,
            valid_from=rate.value_from,
            from_code=from_code,
            to_code=to_code,
        )
        for rate in rates
    ]


def _check_age(ledger: Ledger, rate: ChosenRate, at: dt.datetime) -> None:
    if ledger.max_rate_age is None:
        return
    age = at - rate.valid_from
    if age > dt.timedelta(seconds=ledger.max_rate_age):
        raise _refusal(
            ErrorCode.RATE_TOO_OLD,
            f"The rate {rate.rate_id} was set at {render_timestamp(rate.valid_from)}, "
            f"{int(age.total_seconds())} seconds before the posting takes effect; this ledger "
            f"takes rates at most {ledger.max_rate_age} seconds old.",
            "rate",
        )


def _check_tolerance(rate: ChosenRate, terms: RateTerms) -> None:
    expected = terms.expected
    assert expected is not None
    if abs(rate.value - expected) * 10_000 > expected * terms.tolerance_bps:
        raise _refusal(
            ErrorCode.RATE_OUTSIDE_TOLERANCE,
            f"The stored rate {rate.from_code}/{rate.to_code} is {_decimal(rate.value)}, more "
            f"than {terms.tolerance_bps} basis points from the expected "
            f"{_decimal(expected)}.",
            "rate.expected",
        )


def _decimal(value: Fraction, places: int = 18) -> str:
    """A rate as a decimal for a message: exact when it has at most ``places`` decimals, else
    rounded there and marked with ``~``."""
    scaled = value * 10**places
    digits = round(scaled)
    text = f"{digits // 10**places}.{digits % 10**places:0{places}d}".rstrip("0").rstrip(".")
    return text if scaled == digits else f"~{text}"


def _refusal(error: ErrorCode, message: str, field: str) -> LedgerError:
    return LedgerError(error, message, fields={field: message})
