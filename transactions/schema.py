"""What the transaction endpoints document in the OpenAPI schema beyond their serializers: the
list's parameters, the posting's headers (each once) and its statuses, as the server answers
them. Both spellings of the idempotency key are read (``views._key``); the schema names one, so
that a generated client has one argument for it (docs/CLIENTS.md)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse

from ledgerproject.api.schema import (
    COMMON_ERRORS,
    NO_NUL,
    date_parameter,
    error_responses,
    metadata_parameter,
    page_parameters,
    text_parameter,
)
from transactions import answers, idempotency
from transactions.serializers import DryRunOut, ScheduledPostingOut, TransactionOut

ERRORS = error_responses(*COMMON_ERRORS, 409, 422)

LIST_PARAMS = [
    date_parameter("beginDate", "Inclusive date or timestamp."),
    date_parameter("endDate", "Inclusive date or timestamp."),
    date_parameter("effectiveFrom", "Effective from this date or time, inclusive."),
    date_parameter("effectiveTo", "Effective until this date or time, inclusive."),
    text_parameter("assetCode"),
    text_parameter("status", many=True),
    text_parameter("type", description="Template code."),
    OpenApiParameter("parentTransactionId", {"type": "string", "format": "uuid"}),
    metadata_parameter(),
    *page_parameters(),
]
SCHEDULED_LIST_PARAMS = [
    text_parameter("status", many=True, description="SCHEDULED, POSTED, FAILED or CANCELED."),
    *page_parameters(),
]
IDEMPOTENCY_KEY = {"type": "string", "minLength": 1, "maxLength": 255, "pattern": NO_NUL}

# What the posting endpoints document (OpenAPI): each header once, each status as answered.
# Both spellings of the key are read (``_key``); the schema names one, so that a generated
# client has one argument for it (docs/CLIENTS.md).
KEY_HEADERS = [
    OpenApiParameter(
        "Idempotency-Key",
        IDEMPOTENCY_KEY,
        OpenApiParameter.HEADER,
        description="A key for this request, scoped to the ledger: a repeat with the same key "
        "and body answers the first answer again and posts nothing. The header "
        "`idempotencyKey` is accepted too; send one of the two.",
    ),
    OpenApiParameter(
        "tolerance",
        {"type": "string", "pattern": idempotency.TOLERANCE_PATTERN},
        OpenApiParameter.HEADER,
        description="Seconds: the key's lifetime; without a key, a non-zero tolerance answers "
        "an identical body within it as a replay.",
    ),
]


def replayed_on(*statuses: int) -> OpenApiParameter:
    return OpenApiParameter(
        "Idempotent-Replayed",
        str,
        OpenApiParameter.HEADER,
        response=list(statuses),
        description="`true` when the idempotency key's first answer is replayed.",
    )


POST_PARAMS = [
    OpenApiParameter("dryRun", bool, description="Check and simulate; write nothing."),
    *KEY_HEADERS,
    OpenApiParameter(
        answers.DRY_RUN_HEADER,
        str,
        OpenApiParameter.HEADER,
        response=[200],
        description="`true` on a dry run's answer: nothing was written.",
    ),
    # A replay answers the first answer's status: a posting's 201, a scheduling's 202.
    replayed_on(201, 202),
]
POST_RESPONSES = {
    201: OpenApiResponse(
        TransactionOut,
        description="The transaction posted; or, with the header `Idempotent-Replayed: true`, "
        "the first answer to the same idempotency key, replayed (nothing was posted).",
    ),
    202: OpenApiResponse(
        ScheduledPostingOut,
        description="With `scheduledFor`: the posting kept to be made then (`SCHEDULED`); "
        "nothing moved yet.",
    ),
    200: OpenApiResponse(
        DryRunOut,
        description="A dry run (`?dryRun=true`): what would be written, marked `dryRun: "
        "true`, with the header `Dry-Run: true`; nothing was written.",
    ),
    **ERRORS,
}
