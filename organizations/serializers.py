"""Request and response shapes for organizations, ledgers and the resources of a ledger."""

from __future__ import annotations

from typing import Any

import pycountry
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from ledgerproject.amounts import MAX_AMOUNT
from ledgerproject.api.fields import (
    MetadataField,
    StatusField,
    StatusSchema,
    StrictIntegerField,
    TimestampField,
    declared,
    pattern_field,
)
from ledgerproject.api.serializers import InputSerializer
from ledgerproject.errors import ErrorCode, LedgerError
from organizations.models import (
    ACCOUNT_STATUSES,
    Account,
    BalanceMonitor,
    Ledger,
    Organization,
    Portfolio,
    Product,
)
from outbox import renderers

TIMESTAMPS = frozenset({"id", "createdAt", "updatedAt", "deletedAt"})
LEDGER_IDS = frozenset({"organizationId", "ledgerId"})
ALIAS_PATTERN = Account.ALIAS_PATTERN


class TimestampsOut(serializers.Serializer):
    createdAt = TimestampField(source="created_at")
    updatedAt = TimestampField(source="updated_at")
    deletedAt = TimestampField(source="deleted_at")


class AddressIn(InputSerializer):
    """An address, sent whole (with its country), or ``{}`` for none."""

    empty_is_none = True
    line1 = serializers.CharField(max_length=256, required=False, allow_blank=True)
    line2 = serializers.CharField(max_length=256, required=False, allow_blank=True, allow_null=True)
    zipCode = serializers.CharField(max_length=32, required=False, allow_blank=True)
    city = serializers.CharField(max_length=128, required=False, allow_blank=True)
    state = serializers.CharField(max_length=128, required=False, allow_blank=True)
    country = declared(
        serializers.CharField,
        {"type": "string", "enum": sorted(c.alpha_2 for c in pycountry.countries)},
    )(max_length=2)

    def validate_country(self, value: str) -> str:
        if len(value) != 2 or not value.isupper() or pycountry.countries.get(alpha_2=value) is None:
            raise LedgerError(
                ErrorCode.INVALID_COUNTRY_CODE,
                f"'{value}' is not an ISO 3166-1 alpha-2 country code.",
                fields={"address.country": "not an ISO 3166-1 alpha-2 code"},
            )
        return value


class AddressOut(serializers.Serializer):
    """The address as it was sent: the fields it holds, and no others (``line2`` is null only
    when the client sent null)."""

    line1 = serializers.CharField(required=False)
    line2 = serializers.CharField(required=False, allow_null=True)
    zipCode = serializers.CharField(required=False)
    city = serializers.CharField(required=False)
    state = serializers.CharField(required=False)
    country = serializers.CharField(required=False)

    def to_representation(self, instance: Any) -> dict[str, Any]:
        # DRF renders a missing field that allows null as null; the address is a stored dict.
        data: dict[str, Any] = super().to_representation(instance)
        return {name: value for name, value in data.items() if name in instance}


class OrganizationOut(TimestampsOut):
    id = serializers.UUIDField()
    parentOrganizationId = serializers.UUIDField(source="parent_id", allow_null=True)
    legalName = serializers.CharField(source="legal_name")
    legalDocument = serializers.CharField(source="legal_document")
    doingBusinessAs = serializers.CharField(source="doing_business_as", allow_null=True)
    address = AddressOut()
    status = StatusField()
    metadata = MetadataField()


class OrganizationCreateIn(InputSerializer):
    unmodifiable = TIMESTAMPS
    legalName = serializers.CharField(max_length=256, source="legal_name")
    legalDocument = serializers.CharField(max_length=256, source="legal_document")
    doingBusinessAs = serializers.CharField(
        max_length=256,
        source="doing_business_as",
        required=False,
        allow_null=True,
        allow_blank=True,
    )
    address = AddressIn(required=False)
    parentOrganizationId = serializers.UUIDField(
        source="parent_id", required=False, allow_null=True
    )
    status = StatusField(required=False)
    metadata = MetadataField(required=False)


class OrganizationUpdateIn(InputSerializer):
    unmodifiable = TIMESTAMPS | {"legalDocument"}
    legalName = serializers.CharField(max_length=256, source="legal_name", required=False)
    doingBusinessAs = serializers.CharField(
        max_length=256,
        source="doing_business_as",
        required=False,
        allow_null=True,
        allow_blank=True,
    )
    address = AddressIn(required=False)
    parentOrganizationId = serializers.UUIDField(
        source="parent_id", required=False, allow_null=True
    )
    parentOganizationId = serializers.UUIDField(
        source="parent_id_misspelt", required=False, allow_null=True
    )
    status = StatusField(required=False)
    metadata = MetadataField(required=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if "parent_id_misspelt" in attrs:
            misspelt = attrs.pop("parent_id_misspelt")
            if "parent_id" in attrs and attrs["parent_id"] != misspelt:
                raise serializers.ValidationError(
                    "parentOrganizationId and parentOganizationId disagree."
                )
            attrs["parent_id"] = misspelt
        return attrs


MAX_RATE_AGE = (
    "The oldest a stored rate may be, in seconds since its value was set, for a posting that "
    "converts between assets at it (older: 422 0127); null: any age."
)


class LedgerOut(TimestampsOut):
    id = serializers.UUIDField()
    organizationId = serializers.UUIDField(source="organization_id")
    name = serializers.CharField()
    status = StatusField()
    metadata = MetadataField()
    timeZone = serializers.CharField(source="time_zone", help_text="The ledger's days (IANA).")
    closedThrough = serializers.DateField(
        source="closed_through",
        allow_null=True,
        help_text="The last day of the closed books: nothing effective on or before it is "
        "written (docs/TIME.md).",
    )
    maxRateAgeSeconds = serializers.IntegerField(
        source="max_rate_age", allow_null=True, help_text=MAX_RATE_AGE
    )


class LedgerCreateIn(InputSerializer):
    unmodifiable = TIMESTAMPS | {"organizationId"}
    name = serializers.CharField(max_length=256)
    status = StatusField(required=False)
    metadata = MetadataField(required=False)
    timeZone = serializers.CharField(
        source="time_zone",
        max_length=64,
        required=False,
        help_text="An IANA time zone name (default UTC): where the ledger's days begin.",
    )
    closedThrough = serializers.DateField(
        source="closed_through",
        required=False,
        allow_null=True,
        help_text="Close the books through this day (over, in the ledger's time zone); moving "
        "it back or to null reopens them, with an unrestricted token only.",
    )
    maxRateAgeSeconds = StrictIntegerField(
        source="max_rate_age",
        min_value=1,
        max_value=2**31 - 1,
        required=False,
        allow_null=True,
        help_text=MAX_RATE_AGE,
    )


class LedgerUpdateIn(LedgerCreateIn):
    name = serializers.CharField(max_length=256, required=False)


class PortfolioOut(TimestampsOut):
    id = serializers.UUIDField()
    organizationId = serializers.UUIDField(source="organization_id")
    ledgerId = serializers.UUIDField(source="ledger_id")
    entityId = serializers.CharField(source="entity_id", allow_null=True)
    name = serializers.CharField()
    status = StatusField()
    metadata = MetadataField()


class PortfolioCreateIn(InputSerializer):
    unmodifiable = TIMESTAMPS | LEDGER_IDS
    name = serializers.CharField(max_length=256)
    entityId = serializers.CharField(
        max_length=256, source="entity_id", required=False, allow_null=True
    )
    status = StatusField(required=False)
    metadata = MetadataField(required=False)


class PortfolioUpdateIn(PortfolioCreateIn):
    name = serializers.CharField(max_length=256, required=False)


class ProductOut(TimestampsOut):
    id = serializers.UUIDField()
    organizationId = serializers.UUIDField(source="organization_id")
    ledgerId = serializers.UUIDField(source="ledger_id")
    name = serializers.CharField()
    status = StatusField()
    metadata = MetadataField()


class ProductCreateIn(InputSerializer):
    unmodifiable = TIMESTAMPS | LEDGER_IDS
    name = serializers.CharField(max_length=256)
    status = StatusField(required=False)
    metadata = MetadataField(required=False)


class ProductUpdateIn(ProductCreateIn):
    name = serializers.CharField(max_length=256, required=False)


class AccountBalanceOut(serializers.Serializer):
    available = serializers.IntegerField()
    onHold = serializers.IntegerField(source="on_hold")
    scale = serializers.IntegerField()


class OverdraftLimitOut(serializers.Serializer):
    amount = serializers.IntegerField()
    scale = serializers.IntegerField()


def overdraft_limit_of(balance: Any) -> dict[str, int] | None:
    """A balance's overdraft limit as rendered: at the balance's scale; null when external."""
    if balance.is_external:
        return None
    return {"amount": balance.overdraft_limit, "scale": balance.scale}


class OverdraftLimitIn(InputSerializer):
    amount = StrictIntegerField(min_value=0, max_value=MAX_AMOUNT)
    scale = StrictIntegerField(min_value=0, max_value=18)


class AccountStatusSchema(StatusSchema):
    code = declared(serializers.CharField, {"type": "string", "enum": list(ACCOUNT_STATUSES)})(
        help_text="One of the account statuses, each with its effect on postings: "
        + "; ".join(status.label for status in ACCOUNT_STATUSES.values())
        + "."
    )


@extend_schema_field(AccountStatusSchema)
class AccountStatusField(StatusField):
    """An account's status, whose code is one of ``ACCOUNT_STATUSES`` (``account_create`` and
    ``account_update`` refuse any other, for the admin as for the API)."""


ROLLED_UP = "With rolledUp=true: the account's balance plus all its descendants', per asset."
PARENT = "The account above this one in the account tree (null: none); a change moves its subtree."


class AssetTotalOut(serializers.Serializer):
    assetCode = serializers.CharField()
    available = serializers.IntegerField()
    onHold = serializers.IntegerField()
    scale = serializers.IntegerField()


class AccountOut(TimestampsOut):
    id = serializers.UUIDField()
    organizationId = serializers.UUIDField(source="organization_id")
    ledgerId = serializers.UUIDField(source="ledger_id")
    portfolioId = serializers.UUIDField(source="portfolio_id", allow_null=True)
    productId = serializers.UUIDField(source="product_id", allow_null=True)
    parentAccountId = serializers.UUIDField(source="parent_account_id", allow_null=True)
    entityId = serializers.CharField(source="entity_id", allow_null=True)
    name = serializers.CharField()
    alias = serializers.CharField()
    type = serializers.CharField()
    assetCode = serializers.CharField(source="asset_code")
    allowSending = serializers.BooleanField(source="allow_sending")
    allowReceiving = serializers.BooleanField(source="allow_receiving")
    balance = AccountBalanceOut()
    overdraftLimit = serializers.SerializerMethodField(
        help_text="How far below zero the available balance may go, at the balance's scale; "
        "null for external accounts, which are unbounded."
    )
    status = AccountStatusField()
    metadata = MetadataField()
    rolledUpBalances = AssetTotalOut(
        source="rolled_up_balances", many=True, required=False, help_text=ROLLED_UP
    )

    @extend_schema_field(OverdraftLimitOut(allow_null=True))
    def get_overdraftLimit(self, account: Any) -> dict[str, int] | None:
        return overdraft_limit_of(account.balance)


class StrictBooleanField(serializers.BooleanField):
    """A JSON true or false; DRF's BooleanField would also take "yes", 1 and "on"."""

    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            raise serializers.ValidationError("Must be true or false.")
        return data


class AccountEditableIn(InputSerializer):
    name = serializers.CharField(max_length=256, required=False, allow_blank=True)
    entityId = serializers.CharField(
        max_length=256, source="entity_id", required=False, allow_null=True
    )
    portfolioId = serializers.UUIDField(source="portfolio_id", required=False, allow_null=True)
    productId = serializers.UUIDField(source="product_id", required=False, allow_null=True)
    allowSending = StrictBooleanField(source="allow_sending", required=False)
    allowReceiving = StrictBooleanField(source="allow_receiving", required=False)
    status = AccountStatusField(required=False)
    metadata = MetadataField(required=False)
    overdraftLimit = OverdraftLimitIn(source="overdraft_limit", required=False)
    parentAccountId = serializers.UUIDField(
        source="parent_account_id", required=False, allow_null=True, help_text=PARENT
    )


class AccountCreateIn(AccountEditableIn):
    """Aliases and types of external accounts (0074) are refused by ``account_create``."""

    unmodifiable = TIMESTAMPS | LEDGER_IDS | {"balance"}
    # Untrimmed: the schema's patterns (an instrument's code, not ``external``) hold as sent.
    assetCode = serializers.CharField(max_length=100, source="asset_code", trim_whitespace=False)
    alias = pattern_field(ALIAS_PATTERN, max_length=101, required=False)
    type = serializers.CharField(max_length=100, required=False, trim_whitespace=False)


class AccountUpdateIn(AccountEditableIn):
    """``alias`` follows the create rules (format here; 409 0020 and 422 0074 in
    ``account_update``)."""

    unmodifiable = TIMESTAMPS | LEDGER_IDS | {"balance", "assetCode", "type"}
    alias = pattern_field(ALIAS_PATTERN, max_length=101, required=False)


class RolledUpBalanceOut(serializers.Serializer):
    """An account's balance plus all its descendants' in the account tree, per asset."""

    accountId = serializers.UUIDField()
    alias = serializers.CharField()
    at = serializers.CharField(help_text="The balances effective at this time.")
    balances = AssetTotalOut(many=True, help_text="One per asset held in the subtree, by code.")


class LedgerBalanceOut(serializers.Serializer):
    """One account's balance as a resource of its own."""

    id = serializers.UUIDField()
    organizationId = serializers.UUIDField(source="organization_id")
    ledgerId = serializers.UUIDField(source="ledger_id")
    accountId = serializers.UUIDField(source="account_id")
    alias = serializers.CharField(source="account.alias")
    assetCode = serializers.CharField(source="asset_code")
    accountType = serializers.CharField(source="account.type")
    available = serializers.IntegerField()
    onHold = serializers.IntegerField(source="on_hold")
    scale = serializers.IntegerField()
    overdraftLimit = serializers.SerializerMethodField(
        help_text="How far below zero available may go, at this scale; null when external."
    )
    version = serializers.IntegerField()
    allowSending = serializers.BooleanField(source="account.allow_sending")
    allowReceiving = serializers.BooleanField(source="account.allow_receiving")
    createdAt = TimestampField(source="account.created_at")
    updatedAt = TimestampField(source="updated_at")
    deletedAt = TimestampField(source="account.deleted_at")

    @extend_schema_field(OverdraftLimitOut(allow_null=True))
    def get_overdraftLimit(self, balance: Any) -> dict[str, int] | None:
        return overdraft_limit_of(balance)


class ThresholdIn(InputSerializer):
    amount = StrictIntegerField(min_value=-MAX_AMOUNT, max_value=MAX_AMOUNT)
    scale = StrictIntegerField(min_value=0, max_value=18)


TREE_HELP = (
    "true: the monitor watches the account's rolled-up balance in assetCode (its own plus "
    "every account's under it); false (the default): the account's own balance."
)


class BalanceMonitorOut(TimestampsOut):
    id = serializers.UUIDField()
    organizationId = serializers.UUIDField(source="organization_id")
    ledgerId = serializers.UUIDField(source="ledger_id")
    accountId = serializers.UUIDField(source="account_id")
    tree = serializers.SerializerMethodField()
    assetCode = serializers.SerializerMethodField()
    measure = serializers.ChoiceField(choices=BalanceMonitor.MEASURES)
    condition = serializers.ChoiceField(choices=BalanceMonitor.CONDITIONS)
    threshold = serializers.SerializerMethodField()
    description = serializers.CharField()
    conditionHolds = serializers.BooleanField(
        source="holds",
        help_text="Whether the condition held when the balance was last seen (crossing: "
        "whether the measure was at or above the threshold).",
    )
    lastTriggeredAt = TimestampField(source="last_triggered_at", allow_null=True)
    status = StatusField()
    metadata = MetadataField()

    @extend_schema_field(OverdraftLimitOut)
    def get_threshold(self, monitor: BalanceMonitor) -> dict[str, int]:
        return {"amount": monitor.threshold, "scale": monitor.threshold_scale}

    @extend_schema_field(serializers.BooleanField(help_text=TREE_HELP))
    def get_tree(self, monitor: BalanceMonitor) -> bool:
        return bool(monitor.tree)

    @extend_schema_field(
        serializers.CharField(
            help_text="The asset watched: the account's own for an account "
            "monitor, the one named at creation for a tree monitor."
        )
    )
    def get_assetCode(self, monitor: BalanceMonitor) -> str | None:
        return monitor.asset_code


class BalanceMonitorCreateIn(InputSerializer):
    unmodifiable = TIMESTAMPS | LEDGER_IDS | {"conditionHolds", "lastTriggeredAt"}
    accountId = serializers.UUIDField(source="account_id", help_text="The account watched.")
    tree = StrictBooleanField(required=False, help_text=TREE_HELP)
    assetCode = serializers.CharField(
        source="asset_code",
        max_length=100,
        required=False,
        help_text="For a tree monitor, the asset whose rolled-up balance it watches (the "
        "account's own if absent).",
    )
    measure = serializers.ChoiceField(
        choices=BalanceMonitor.MEASURES,
        help_text="available, onHold, or overdraftUsed (how far below zero available is).",
    )
    condition = serializers.ChoiceField(
        choices=BalanceMonitor.CONDITIONS,
        help_text="below or above the threshold, or crossing it either way.",
    )
    threshold = ThresholdIn(help_text="An amount at a scale (0 to 18).")
    description = serializers.CharField(max_length=256, required=False, allow_blank=True)
    status = StatusField(required=False)
    metadata = MetadataField(required=False)


class BalanceMonitorUpdateIn(BalanceMonitorCreateIn):
    unmodifiable = BalanceMonitorCreateIn.unmodifiable | {
        "accountId", "measure", "tree", "assetCode",
    }  # fmt: skip
    condition = serializers.ChoiceField(choices=BalanceMonitor.CONDITIONS, required=False)
    threshold = ThresholdIn(required=False)

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = dict(super().get_fields())
        for name in ("accountId", "measure", "tree", "assetCode"):
            del fields[name]
        return fields


# How each resource renders in its events (``outbox.renderers``).
def _renderer(out: type[serializers.Serializer]) -> renderers.Renderer:
    return lambda obj: out(obj).data


for _model, _noun, _out in (
    (Organization, "organization", OrganizationOut),
    (Ledger, "ledger", LedgerOut),
    (Portfolio, "portfolio", PortfolioOut),
    (Product, "product", ProductOut),
    (Account, "account", AccountOut),
    (BalanceMonitor, "balance_monitor", BalanceMonitorOut),
):
    renderers.register(_model, _noun, _renderer(_out))
