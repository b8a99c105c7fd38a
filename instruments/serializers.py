"""Request and response shapes for instruments and for rates.

A rate has two faces over one record: ``/instrument-rates`` names the pair
``baseInstrumentCode``/``counterInstrumentCode`` and ``/asset-rates`` names it
``baseAssetCode``/``counterAssetCode``. ``RateFace`` builds each face's serializers from those
two names, so the faces cannot drift apart."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rest_framework import serializers

from instruments import services
from instruments.conversion import DIRECT, INVERSE, MAX_TOLERANCE_BPS, RateTerms
from instruments.models import Instrument, Rate
from ledgerproject.api.fields import MetadataField, StatusField, StrictIntegerField, declared
from ledgerproject.api.serializers import InputSerializer
from organizations.serializers import TIMESTAMPS, TimestampsOut
from outbox import renderers

IDS = frozenset({"organizationId", "ledgerId"})
BIGINT_MAX = 2**63 - 1
SCALE_MAX = 18


class InstrumentOut(TimestampsOut):
    id = serializers.UUIDField()
    ledgerId = serializers.UUIDField(source="ledger_id")
    organizationId = serializers.UUIDField(source="organization_id")
    name = serializers.CharField()
    type = serializers.CharField()
    code = serializers.CharField()
    status = StatusField()
    metadata = MetadataField()


class InstrumentCreateIn(InputSerializer):
    """Type and code rules (0040, 0004, 0005) are checked by ``instrument_validate``."""

    unmodifiable = TIMESTAMPS | IDS
    name = serializers.CharField(max_length=256)
    type = declared(serializers.CharField, {"type": "string", "enum": list(Instrument.TYPES)})(
        max_length=20
    )
    code = declared(
        serializers.CharField,
        {
            "type": "string",
            "pattern": "^[A-Z0-9]+$",
            "minLength": 1,
            "maxLength": services.MAX_CODE_LENGTH,
        },
    )(max_length=100)
    status = StatusField(required=False)
    metadata = MetadataField(required=False)


class InstrumentUpdateIn(InputSerializer):
    unmodifiable = TIMESTAMPS | IDS | {"type", "code"}
    name = serializers.CharField(max_length=256, required=False)
    status = StatusField(required=False)
    metadata = MetadataField(required=False)


@dataclass(frozen=True)
class RateFace:
    """One face of the rate resource: its component prefix and the names of the pair fields."""

    label: str
    base: str
    counter: str

    def output(self) -> type[serializers.Serializer]:
        fields: dict[str, Any] = {
            "id": serializers.UUIDField(),
            "ledgerId": serializers.UUIDField(source="ledger_id"),
            "organizationId": serializers.UUIDField(source="organization_id"),
            self.base: serializers.CharField(source="base_code"),
            self.counter: serializers.CharField(source="counter_code"),
            "amount": StrictIntegerField(),
            "scale": StrictIntegerField(),
            "source": serializers.CharField(),
            "status": StatusField(),
            "metadata": MetadataField(),
        }
        return type(f"{self.label}Out", (TimestampsOut,), fields)

    def _editable(self, *, required: bool) -> dict[str, Any]:
        return {
            "amount": StrictIntegerField(min_value=1, max_value=BIGINT_MAX, required=required),
            "scale": StrictIntegerField(min_value=0, max_value=SCALE_MAX, required=required),
            "source": serializers.CharField(max_length=256, required=False, allow_blank=True),
            "status": StatusField(required=False),
            "metadata": MetadataField(required=False),
        }

    def create_input(self) -> type[InputSerializer]:
        base, counter = self.base, self.counter

        def validate(serializer: InputSerializer, attrs: dict[str, Any]) -> dict[str, Any]:
            if attrs["base_code"] == attrs["counter_code"]:
                raise serializers.ValidationError({counter: f"must differ from {base}."})
            return attrs

        fields: dict[str, Any] = {
            "unmodifiable": TIMESTAMPS | IDS,
            # Untrimmed: the schema's pattern (an instrument's code) is checked as sent.
            base: serializers.CharField(max_length=100, source="base_code", trim_whitespace=False),
            counter: serializers.CharField(
                max_length=100, source="counter_code", trim_whitespace=False
            ),
            **self._editable(required=True),
            "validate": validate,
        }
        return type(f"{self.label}CreateIn", (InputSerializer,), fields)

    def update_input(self) -> type[InputSerializer]:
        pair_names = {f.base for f in FACES} | {f.counter for f in FACES}
        fields: dict[str, Any] = {
            "unmodifiable": TIMESTAMPS | IDS | pair_names,
            **self._editable(required=False),
        }
        return type(f"{self.label}UpdateIn", (InputSerializer,), fields)


INSTRUMENT_RATE = RateFace("InstrumentRate", "baseInstrumentCode", "counterInstrumentCode")
ASSET_RATE = RateFace("AssetRate", "baseAssetCode", "counterAssetCode")
FACES = (INSTRUMENT_RATE, ASSET_RATE)

InstrumentRateOut = INSTRUMENT_RATE.output()
InstrumentRateCreateIn = INSTRUMENT_RATE.create_input()
InstrumentRateUpdateIn = INSTRUMENT_RATE.update_input()
AssetRateOut = ASSET_RATE.output()
AssetRateCreateIn = ASSET_RATE.create_input()
AssetRateUpdateIn = ASSET_RATE.update_input()


# Events render a rate in its instrument face (``outbox.renderers``).
renderers.register(Instrument, "instrument", lambda obj: InstrumentOut(obj).data)
renderers.register(Rate, "rate", lambda obj: InstrumentRateOut(obj).data)


# Conversions (``instruments.conversion``): what a posting that converts between assets takes
# of its rate, and the record a converting transaction and its operations answer with.


class ExpectedRateIn(InputSerializer):
    amount = StrictIntegerField(min_value=1, max_value=BIGINT_MAX)
    scale = StrictIntegerField(min_value=0, max_value=SCALE_MAX)


class RateTermsIn(InputSerializer):
    """What a posting from a template that converts (``(convert ...)``) asks of its rate."""

    id = serializers.UUIDField(
        required=False,
        allow_null=True,
        help_text="Convert at this rate (either way round) or not at all: refused (0126) "
        "unless it is a rate of the pair in force when the posting takes effect.",
    )
    expected = ExpectedRateIn(
        required=False,
        allow_null=True,
        help_text="The rate the client expects, as units of the delivered asset per unit sent "
        "(amount at scale); refused (0128) when the stored one differs by more than "
        "toleranceBps.",
    )
    toleranceBps = StrictIntegerField(
        source="tolerance_bps",
        min_value=0,
        max_value=MAX_TOLERANCE_BPS,
        required=False,
        help_text="How far the stored rate may be from the expected one, in basis points of the "
        "expected one (100 is 1 %); 0 by default: exactly the expected rate.",
    )

    def validate(self, attrs: dict[str, Any]) -> RateTerms:
        expected = attrs.get("expected")
        if "tolerance_bps" in attrs and expected is None:
            raise serializers.ValidationError(
                {"toleranceBps": "only with an expected rate (expected)"}
            )
        return RateTerms(
            rate_id=attrs.get("id"),
            expected_amount=expected["amount"] if expected else None,
            expected_scale=expected["scale"] if expected else 0,
            tolerance_bps=attrs.get("tolerance_bps", 0),
        )


class AppliedRateOut(serializers.Serializer):
    id = serializers.UUIDField(help_text="The stored rate.")
    baseAssetCode = serializers.CharField()
    counterAssetCode = serializers.CharField()
    amount = serializers.IntegerField(help_text="Its value then: amount at scale.")
    scale = serializers.IntegerField()
    # The API's field name; DRF takes declared fields from the class body.
    source = serializers.CharField()  # type: ignore[assignment]
    validFrom = serializers.CharField(help_text="Since when the rate held this value.")
    direction = serializers.ChoiceField(
        choices=[DIRECT, INVERSE],
        help_text="DIRECT: base is the asset sent; INVERSE: the rate was stored the other way "
        "round and applied inverted.",
    )


class ConvertedAmountOut(serializers.Serializer):
    assetCode = serializers.CharField()
    amount = serializers.IntegerField()
    scale = serializers.IntegerField()


class ConversionOut(serializers.Serializer):
    """A transaction that delivered in another asset than it sent: the rate and both amounts."""

    rate = AppliedRateOut()
    sent = ConvertedAmountOut()
    delivered = ConvertedAmountOut(help_text="The amount sent, converted, half to even.")
