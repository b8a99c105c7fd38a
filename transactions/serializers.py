"""Request and response shapes for transactions, operations, balances and charts."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from ledgerproject.api.errors import ApiError, ErrorCode
from ledgerproject.api.fields import MetadataField, TimestampField
from ledgerproject.api.serializers import InputSerializer


class StrictBooleanField(serializers.BooleanField):
    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            raise serializers.ValidationError("Must be true or false.")
        return data


@extend_schema_field(
    {
        "type": "object",
        "additionalProperties": {"oneOf": [{"type": "integer"}, {"type": "string"}]},
        "description": "Variable name (with or without $) to an amount in minor units "
        "(integer or string of digits) or an account alias.",
    }
)
class VariablesField(serializers.Field):
    def to_internal_value(self, data: Any) -> dict[str, Any]:
        if not isinstance(data, dict):
            raise ApiError(
                ErrorCode.BAD_REQUEST,
                "variables must be an object.",
                fields={"variables": "not an object"},
            )
        return data

    def to_representation(self, value: Any) -> Any:
        return value


class TransactionIn(InputSerializer):
    transactionTypeCode = serializers.CharField(max_length=100, source="template_code")
    variables = VariablesField(required=False, default=dict)
    metadata = MetadataField(required=False, default=dict)
    parentTransactionId = serializers.UUIDField(source="parent_id", required=False, allow_null=True)
    description = serializers.CharField(
        max_length=2000, required=False, allow_null=True, allow_blank=True
    )
    pending = StrictBooleanField(required=False, allow_null=True, default=None)


class AmountOut(serializers.Serializer):
    amount = serializers.IntegerField()
    scale = serializers.IntegerField()


class BalanceOut(serializers.Serializer):
    available = serializers.IntegerField()
    onHold = serializers.IntegerField()
    scale = serializers.IntegerField()


@extend_schema_field(AmountOut)
class AmountField(serializers.Field):
    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("source", "*")
        kwargs.setdefault("read_only", True)
        super().__init__(**kwargs)

    def to_representation(self, obj: Any) -> dict[str, int]:
        return {"amount": obj.amount, "scale": obj.scale}


@extend_schema_field(BalanceOut)
class BalanceField(serializers.Field):
    """``balance`` (before) or ``balanceAfter`` of an operation."""

    def __init__(self, *, after: bool, **kwargs: Any) -> None:
        self.suffix = "_after" if after else ""
        kwargs.setdefault("source", "*")
        kwargs.setdefault("read_only", True)
        super().__init__(**kwargs)

    def to_representation(self, op: Any) -> dict[str, int]:
        return {
            "available": getattr(op, f"balance_available{self.suffix}"),
            "onHold": getattr(op, f"balance_on_hold{self.suffix}"),
            "scale": getattr(op, f"balance_scale{self.suffix}"),
        }


class OperationOut(serializers.Serializer):
    id = serializers.UUIDField()
    transactionId = serializers.UUIDField(source="transaction_id")
    ledgerId = serializers.UUIDField(source="ledger_id")
    organizationId = serializers.UUIDField(source="organization_id")
    description = serializers.CharField()
    type = serializers.ChoiceField(choices=["DEBIT", "CREDIT"])
    assetCode = serializers.CharField(source="asset_code")
    chartOfAccounts = serializers.CharField(source="chart_of_accounts")
    amount = AmountField()
    balance = BalanceField(after=False)
    balanceAfter = BalanceField(after=True)
    accountId = serializers.UUIDField(source="account_id")
    accountAlias = serializers.CharField(source="account_alias")
    portfolioId = serializers.UUIDField(source="portfolio_id", allow_null=True)
    metadata = MetadataField()
    createdAt = TimestampField(source="created_at")
    updatedAt = TimestampField(source="updated_at")


class TransactionOut(serializers.Serializer):
    id = serializers.UUIDField()
    parentTransactionId = serializers.UUIDField(source="parent_id", allow_null=True)
    ledgerId = serializers.UUIDField(source="ledger_id")
    organizationId = serializers.UUIDField(source="organization_id")
    description = serializers.CharField(allow_null=True)
    type = serializers.CharField(help_text="The code of the template used.")
    status = serializers.ChoiceField(choices=["CREATED", "PRE_APPROVED", "SENT", "CANCELED"])
    amount = AmountField()
    assetCode = serializers.CharField(source="asset_code")
    chartOfAccountsGroupName = serializers.CharField(source="chart_of_accounts_group_name")
    source = serializers.ListField(child=serializers.CharField())
    destination = serializers.ListField(child=serializers.CharField())
    metadata = MetadataField()
    operations = OperationOut(many=True, source="operations.all")
    createdAt = TimestampField(source="created_at")
    updatedAt = TimestampField(source="updated_at")


class PointInTimeBalanceOut(serializers.Serializer):
    accountId = serializers.UUIDField()
    alias = serializers.CharField()
    assetCode = serializers.CharField()
    at = serializers.CharField()
    available = serializers.IntegerField()
    onHold = serializers.IntegerField()
    scale = serializers.IntegerField()


class ChartIn(InputSerializer):
    type = serializers.CharField(max_length=64)
    startDate = serializers.CharField(required=False, allow_null=True)
    endDate = serializers.CharField(required=False, allow_null=True)


class ChartItemOut(serializers.Serializer):
    metric = serializers.CharField()
    count = serializers.IntegerField()
    scale = serializers.IntegerField(required=False)


class ChartOut(serializers.Serializer):
    type = serializers.CharField()
    startDate = serializers.CharField(allow_null=True)
    endDate = serializers.CharField(allow_null=True)
    data = ChartItemOut(many=True)
