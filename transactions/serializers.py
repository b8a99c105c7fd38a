"""Request and response shapes for transactions, operations, balances and charts, and the
parameters and answers the transaction endpoints document (OpenAPI)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from instruments.serializers import ConversionOut, RateTermsIn
from ledgerproject.amounts import MAX_AMOUNT
from ledgerproject.api.fields import (
    MetadataField,
    StrictIntegerField,
    TimestampField,
    declared,
    pattern_field,
)
from ledgerproject.api.schema import (
    ErrorSerializer,
)
from ledgerproject.api.serializers import InputSerializer
from ledgerproject.errors import ErrorCode, LedgerError
from outbox import renderers
from templates_dsl.lexer import NAME_RE
from templates_dsl.limits import MAX_TEMPLATE_BYTES
from transactions import selectors
from transactions.engine import MAX_BATCH
from transactions.models import ScheduledPosting, Transaction
from transactions.rendering import scheduled_data, transaction_data


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
            raise LedgerError(
                ErrorCode.BAD_REQUEST,
                "variables must be an object.",
                fields={"variables": "not an object"},
            )
        return data

    def to_representation(self, value: Any) -> Any:
        return value


def expires_at_field() -> serializers.DateTimeField:
    """A pending posting's expiry, the same field on every posting endpoint."""
    return serializers.DateTimeField(
        source="expires_at",
        required=False,
        allow_null=True,
        default=None,
        help_text="A pending transaction still pending at this instant is canceled.",
    )


def effective_at_field() -> serializers.DateTimeField:
    """When the money moved, the same field on every posting, commit, cancel and revert."""
    return serializers.DateTimeField(
        source="effective_at",
        required=False,
        allow_null=True,
        default=None,
        help_text="When it took effect (not in the future); by default, when it is written. "
        "Balances are checked as posted, whatever the effective time.",
    )


def commit_at_field() -> serializers.DateTimeField:
    return serializers.DateTimeField(
        source="commit_at",
        required=False,
        allow_null=True,
        default=None,
        help_text="A pending transaction still pending at this instant commits itself in full "
        "(before expiresAt).",
    )


def scheduled_for_field() -> serializers.DateTimeField:
    return serializers.DateTimeField(
        source="scheduled_for",
        required=False,
        allow_null=True,
        default=None,
        help_text="Post it at this future instant instead of now: answered 202 with the "
        "scheduled posting, which moves no money until then.",
    )


def rate_terms_field() -> RateTermsIn:
    return RateTermsIn(
        required=False,
        allow_null=True,
        default=None,
        help_text="For a template that converts between assets: the rate it may convert at.",
    )


class PostingOptionsIn(InputSerializer):
    """What every posting takes besides its template (a stored one's code, or an inline one)."""

    shares_fields = True

    variables = VariablesField(required=False, default=dict)
    metadata = MetadataField(required=False, default=dict)
    parentTransactionId = serializers.UUIDField(source="parent_id", required=False, allow_null=True)
    description = serializers.CharField(
        max_length=2000, required=False, allow_null=True, allow_blank=True
    )
    pending = StrictBooleanField(required=False, allow_null=True, default=None)
    expiresAt = expires_at_field()
    effectiveAt = effective_at_field()
    commitAt = commit_at_field()
    scheduledFor = scheduled_for_field()
    rate = rate_terms_field()


class TransactionIn(PostingOptionsIn):
    transactionTypeCode = pattern_field(
        f"^{NAME_RE.pattern}$",
        max_length=100,
        source="template_code",
        help_text="The code of a stored template of this ledger.",
    )

    def get_fields(self) -> dict[str, serializers.Field]:
        """The template's code first, as clients write it (and as errors and the schema list it)."""
        fields = dict(super().get_fields())
        return {"transactionTypeCode": fields.pop("transactionTypeCode"), **fields}


class CommitIn(InputSerializer):
    """The optional body of a commit: settle only ``amount`` (at ``scale``, by default the
    transaction's) and release the rest of the hold."""

    amount = StrictIntegerField(min_value=1, max_value=MAX_AMOUNT, required=False)
    scale = StrictIntegerField(min_value=0, max_value=18, required=False)
    effectiveAt = effective_at_field()


class ActionIn(InputSerializer):
    """The optional body of a revert or cancel: when it takes effect."""

    effectiveAt = effective_at_field()


class InlineDslIn(PostingOptionsIn):
    """``POST .../transactions/dsl`` as JSON: the template-language text and its variables."""

    dsl = serializers.CharField(
        max_length=MAX_TEMPLATE_BYTES, trim_whitespace=False, help_text="Template-language text."
    )


class InlineJsonIn(InputSerializer):
    """``POST .../transactions/json``: the variables and parent; the rest of the body is the
    template as JSON (``templates_dsl.inline``)."""

    shares_fields = True
    variables = VariablesField(required=False, default=dict)
    parentTransactionId = serializers.UUIDField(source="parent_id", required=False, allow_null=True)
    expiresAt = expires_at_field()
    effectiveAt = effective_at_field()
    commitAt = commit_at_field()
    scheduledFor = scheduled_for_field()
    rate = rate_terms_field()


class TransactionBatchItemIn(TransactionIn):
    """One posting of a batch: a posting body, plus its own optional idempotency key. A batch
    posts now: its items take no ``scheduledFor`` (an unknown field)."""

    idempotencyKey = serializers.CharField(
        source="idempotency_key", min_length=1, max_length=255, required=False
    )

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        del fields["scheduledFor"]
        return fields


@extend_schema_field(TransactionBatchItemIn(many=True))
class BatchItemsField(serializers.ListField):
    """The items, each parsed on its own (an error names the item)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            child=serializers.JSONField(),
            allow_empty=False,
            min_length=1,  # the same rule, for the schema's minItems (read from the validator)
            max_length=MAX_BATCH,
            **kwargs,
        )


class TransactionBatchIn(InputSerializer):
    """Up to 1,000 postings. ``atomic`` (default true): all or none, answered 201 with the
    transactions; false: each on its own, answered 200 with each item's status and transaction
    or error, in order."""

    transactions = BatchItemsField()
    atomic = StrictBooleanField(required=False, default=True)


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
    effect = serializers.ChoiceField(
        choices=["POST", "HOLD", "SETTLE", "RELEASE"],
        help_text="What the operation did to the balance: moved available, put it on hold, "
        "settled a hold, or released a hold back to available.",
    )
    assetCode = serializers.CharField(source="asset_code")
    chartOfAccounts = serializers.CharField(source="chart_of_accounts")
    amount = AmountField()
    balance = BalanceField(after=False)
    balanceAfter = BalanceField(after=True)
    accountId = serializers.UUIDField(source="account_id")
    accountAlias = serializers.CharField(source="account_alias")
    portfolioId = serializers.UUIDField(source="portfolio_id", allow_null=True)
    metadata = MetadataField()
    effectiveAt = TimestampField(
        source="effective_at", help_text="When this change of the balance took effect."
    )
    conversion = ConversionOut(
        allow_null=True, help_text="Its transaction's conversion, when that converts."
    )
    createdAt = TimestampField(source="created_at")
    updatedAt = TimestampField(source="updated_at")


class StatementOperationOut(OperationOut):
    """An operation of an account's statement: in effective order, with the balance effective
    just after it."""

    runningBalance = BalanceOut(
        required=False,
        help_text="With order=effective: the balance effective just after this operation, at "
        "the balance's scale now.",
    )


class ActorOut(serializers.Serializer):
    kind = serializers.ChoiceField(choices=["token", "staff", "command", "system"])
    name = serializers.CharField(help_text="The token's name, the username, or the command.")
    id = serializers.CharField(
        allow_null=True,
        help_text="The token's id, the user's id, or the OS user that ran the command.",
    )


class TransactionOut(serializers.Serializer):
    id = serializers.UUIDField()
    parentTransactionId = serializers.UUIDField(source="parent_id", allow_null=True)
    ledgerId = serializers.UUIDField(source="ledger_id")
    organizationId = serializers.UUIDField(source="organization_id")
    description = serializers.CharField(allow_null=True)
    type = serializers.CharField(
        allow_null=True, help_text="The code of the template used; null for an inline posting."
    )
    inline = serializers.BooleanField(
        help_text="true when the transaction was posted with no stored template (inline)."
    )
    status = serializers.ChoiceField(choices=Transaction.STATUSES)
    amount = AmountField()
    assetCode = serializers.CharField(source="asset_code")
    chartOfAccountsGroupName = serializers.CharField(source="chart_of_accounts_group_name")
    # ``source`` and ``data`` are the API's field names; DRF takes declared fields from the class
    # body, so shadowing Field.source / Serializer.data there is safe.
    source = serializers.ListField(child=serializers.CharField())  # type: ignore[assignment]
    destination = serializers.ListField(child=serializers.CharField())
    metadata = MetadataField()
    operations = OperationOut(many=True, source="operations.all")
    expiresAt = TimestampField(source="expires_at", allow_null=True)
    commitAt = TimestampField(
        source="commit_at",
        allow_null=True,
        help_text="A pending transaction commits itself then, unless settled first.",
    )
    effectiveAt = TimestampField(
        source="effective_at",
        help_text="When the money moved, as the books tell it; createdAt is when it was posted.",
    )
    conversion = ConversionOut(
        allow_null=True,
        help_text="For a transaction that delivers in another asset than it sends: the stored "
        "rate it converted at and both amounts; null otherwise.",
    )
    actor = ActorOut(help_text="Who posted it: an API token, a staff user or a command.")
    requestId = serializers.CharField(
        allow_null=True, help_text="The X-Request-Id of the request that posted it."
    )
    createdAt = TimestampField(source="created_at")
    updatedAt = TimestampField(source="updated_at")


class ScheduledPostingOut(serializers.Serializer):
    """A posting kept to be made later (``transactions.rendering.scheduled_data`` renders it)."""

    id = serializers.UUIDField()
    ledgerId = serializers.UUIDField()
    organizationId = serializers.UUIDField()
    status = serializers.ChoiceField(
        choices=ScheduledPosting.STATUSES,
        help_text="SCHEDULED until its time; then POSTED (transactionId) or FAILED (error); "
        "CANCELED if canceled before.",
    )
    scheduledFor = TimestampField(help_text="When it is posted, and takes effect.")
    transactionTypeCode = serializers.CharField(
        allow_null=True, help_text="The stored template it posts with; null when inline."
    )
    dsl = serializers.CharField(
        allow_null=True, help_text="The inline template it posts with, as template text."
    )
    variables = VariablesField()
    metadata = MetadataField()
    description = serializers.CharField(allow_null=True)
    pending = serializers.BooleanField(allow_null=True)
    parentTransactionId = serializers.UUIDField(allow_null=True)
    expiresAt = TimestampField(allow_null=True)
    commitAt = TimestampField(allow_null=True)
    transactionId = serializers.UUIDField(
        allow_null=True, help_text="The transaction it posted (POSTED)."
    )
    error = ErrorSerializer(allow_null=True, help_text="Why it was refused when due (FAILED).")
    actor = ActorOut(help_text="Who scheduled it; the transaction it posts records them too.")
    requestId = serializers.CharField(allow_null=True)
    createdAt = TimestampField()
    updatedAt = TimestampField(help_text="When its status last changed.")


class DryRunOut(TransactionOut):
    dryRun = serializers.BooleanField(
        required=False, help_text="true on a dry run: the transaction was not written."
    )


class BatchItemOut(serializers.Serializer):
    """One item of a non-atomic batch's answer."""

    index = serializers.IntegerField()
    status = serializers.IntegerField(help_text="201, or the item's error status.")
    transaction = TransactionOut(required=False, help_text="When the item was posted.")
    error = ErrorSerializer(required=False, help_text="When the item was refused.")
    idempotentReplayed = serializers.BooleanField(
        required=False, help_text="true when the item's idempotencyKey was already answered."
    )


class PointInTimeBalanceOut(serializers.Serializer):
    accountId = serializers.UUIDField()
    alias = serializers.CharField()
    assetCode = serializers.CharField()
    at = serializers.CharField(help_text="The balance effective at this time.")
    asOf = serializers.CharField(help_text="As the ledger knew it at this time.")
    available = serializers.IntegerField()
    onHold = serializers.IntegerField()
    scale = serializers.IntegerField()


_CHART_DATE = {
    "type": "string",
    "nullable": True,
    "anyOf": [{"format": "date"}, {"format": "date-time"}],
}


class ChartIn(InputSerializer):
    type = declared(
        serializers.CharField,
        {"type": "string", "enum": [*selectors.CHART_TYPES, *selectors.CHART_ALIASES]},
    )(max_length=64)
    startDate = declared(serializers.CharField, _CHART_DATE)(required=False, allow_null=True)
    endDate = declared(serializers.CharField, _CHART_DATE)(required=False, allow_null=True)


class ChartItemOut(serializers.Serializer):
    metric = serializers.CharField()
    count = serializers.IntegerField()
    scale = serializers.IntegerField(required=False)


class ChartOut(serializers.Serializer):
    type = serializers.CharField()
    startDate = serializers.CharField(allow_null=True)
    endDate = serializers.CharField(allow_null=True)
    data = ChartItemOut(many=True)  # type: ignore[assignment]


class TrialBalanceLineOut(serializers.Serializer):
    accountId = serializers.UUIDField()
    alias = serializers.CharField()
    debits = serializers.IntegerField(help_text="What left the account, at the asset's scale.")
    credits = serializers.IntegerField(help_text="What reached the account.")
    balance = serializers.IntegerField(help_text="credits - debits: available plus on hold.")


class TrialBalanceChartOut(serializers.Serializer):
    chartOfAccounts = serializers.CharField()
    debits = serializers.IntegerField()
    credits = serializers.IntegerField()
    accounts = TrialBalanceLineOut(many=True)


class TrialBalanceAssetOut(serializers.Serializer):
    assetCode = serializers.CharField()
    scale = serializers.IntegerField(help_text="The scale of every figure of this asset.")
    debits = serializers.IntegerField()
    credits = serializers.IntegerField(help_text="Equal to debits: every transaction balances.")
    charts = TrialBalanceChartOut(many=True)


class TrialBalanceOut(serializers.Serializer):
    ledgerId = serializers.UUIDField()
    timeZone = serializers.CharField()
    at = serializers.CharField(help_text="Effective at this moment (a date: its end).")
    assets = TrialBalanceAssetOut(many=True)


class PeriodLineOut(serializers.Serializer):
    accountId = serializers.UUIDField()
    alias = serializers.CharField()
    opening = serializers.IntegerField(help_text="The balance effective before the period.")
    debits = serializers.IntegerField()
    credits = serializers.IntegerField()
    closing = serializers.IntegerField(help_text="opening + credits - debits.")


class PeriodChartOut(serializers.Serializer):
    chartOfAccounts = serializers.CharField()
    opening = serializers.IntegerField()
    debits = serializers.IntegerField()
    credits = serializers.IntegerField()
    closing = serializers.IntegerField()
    accounts = PeriodLineOut(many=True)


class PeriodAssetOut(serializers.Serializer):
    assetCode = serializers.CharField()
    scale = serializers.IntegerField()
    opening = serializers.IntegerField()
    debits = serializers.IntegerField()
    credits = serializers.IntegerField()
    closing = serializers.IntegerField()
    charts = PeriodChartOut(many=True)


# ``from`` is a keyword of Python: the class is made from a mapping of its fields.
PeriodReportOut = type(
    "PeriodReportOut",
    (serializers.Serializer,),
    {
        "__module__": __name__,
        "__doc__": "Each account's opening balance, movements and closing balance.",
        "ledgerId": serializers.UUIDField(),
        "timeZone": serializers.CharField(),
        "from": serializers.CharField(help_text="The period's first moment (a date: its start)."),
        "to": serializers.CharField(help_text="The period's last moment (a date: its end)."),
        "assets": PeriodAssetOut(many=True),
    },
)


# The endpoints' documented parameters and answers (drf-spectacular), beside the shapes.

renderers.register(Transaction, "transaction", transaction_data, plain=True)
renderers.register(ScheduledPosting, "scheduled_posting", scheduled_data, plain=True)
