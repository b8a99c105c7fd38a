"""The error catalogue and the one domain error type.

Every refusal in the service is a ``LedgerError`` carrying an ``ErrorCode`` (its code, title and
the HTTP status the catalogue gives it). The domain raises it and knows nothing of HTTP; the API's
exception handler (``ledgerproject.api.exceptions``) renders it as ``{code, title, description
[, fields]}``, the admin and the commands show its description.
"""

from __future__ import annotations

import enum
from typing import Any


class ErrorCode(enum.Enum):
    """A code, its HTTP status and its title."""

    def __init__(self, code: str, http_status: int, title: str) -> None:
        self.code = code
        self.http_status = http_status
        self.title = title

    CODE_UPPERCASE = ("0004", 400, "Code Uppercase Requirement")
    CURRENCY_CODE = ("0005", 400, "Currency Code Standard Compliance")
    UNMODIFIABLE_FIELD = ("0006", 400, "Unmodifiable Field")
    NOT_FOUND = ("0007", 404, "Entity not found")
    ACTION_NOT_PERMITTED = ("0008", 422, "Action Not Permitted")
    MISSING_FIELDS = ("0009", 400, "Missing Fields in Request")
    BALANCE_REMAINING = ("0012", 422, "Balance Remaining")
    ALREADY_REMOVED = ("0013", 400, "Entity has been already removed")
    INVALID_SCRIPT = ("0017", 400, "Invalid Script Format")
    INSUFFICIENT_FUNDS = ("0018", 422, "Insufficient Funds")
    PARENT_TRANSACTION_NOT_FOUND = ("0021", 422, "Parent Transaction Not Found")
    ACCOUNT_STATUS_RESTRICTION = ("0024", 422, "Account Status Transaction Restriction")
    METHOD_NOT_ALLOWED = ("0026", 405, "Method Not Allowed")
    TEMPLATE_CODE_IN_USE = ("0027", 409, "transaction template code already in use")
    DUPLICATE_ASSET_PAIR = ("0028", 409, "Duplicate Asset Pair")
    MISMATCHED_ASSET_CODE = ("0030", 422, "Mismatched Asset Code")
    CHART_TYPE_NOT_FOUND = ("0031", 400, "Chart Type Not Found")
    INVALID_COUNTRY_CODE = ("0032", 400, "Invalid Country Code")
    ASSET_CODE_NOT_FOUND = ("0034", 422, "Asset Code Not Found")
    PORTFOLIO_NOT_FOUND = ("0035", 422, "Portfolio Not Found")
    PRODUCT_NOT_FOUND = ("0036", 422, "Product Not Found")
    PARENT_ORGANIZATION_NOT_FOUND = ("0039", 422, "Parent Organization Not Found")
    INVALID_TYPE = ("0040", 400, "Invalid Type")
    TOKEN_MISSING = ("0041", 401, "Token Missing")
    INVALID_TOKEN = ("0042", 401, "Invalid Token")
    INSUFFICIENT_PRIVILEGES = ("0043", 403, "Insufficient Privileges")
    INTERNAL_SERVER_ERROR = ("0046", 500, "Internal Server Error")
    BAD_REQUEST = ("0047", 400, "Bad Request")
    UNSUPPORTED_MEDIA_TYPE = ("0047", 415, "Unsupported Media Type")
    EMPTY_DSL = ("0049", 400, "Empty DSL File")
    METADATA_KEY_LENGTH = ("0050", 400, "Metadata Key Length Exceeded")
    METADATA_VALUE_LENGTH = ("0051", 400, "Metadata Value Length Exceeded")
    UNEXPECTED_FIELDS = ("0053", 400, "Unexpected Fields in the Request")
    INVALID_METADATA_NESTING = ("0067", 400, "Invalid Metadata Nesting")
    TRANSACTION_VALUE_MISMATCH = ("0073", 422, "Transaction Value Mismatch")
    EXTERNAL_ACCOUNT_MODIFICATION = ("0074", 422, "External Account Modification Prohibited")
    INVALID_DATE_FORMAT = ("0077", 400, "Invalid Date Format")
    PAGINATION_LIMIT_EXCEEDED = ("0080", 400, "Pagination Limit Exceeded")
    INVALID_QUERY_PARAMETER = ("0082", 400, "Invalid Query Parameter")
    INVALID_DATE_RANGE = ("0083", 400, "Invalid Date Range")
    IDEMPOTENCY_KEY_RUNNING = ("0084", 409, "Idempotency Key In Use")
    IDEMPOTENCY_KEY_MISMATCH = ("0084", 422, "Idempotency Key In Use")
    ACCOUNT_ALIAS_NOT_FOUND = ("0085", 422, "Account Alias Not Found")
    REVERT_ALREADY_EXISTS = ("0087", 422, "Transaction Revert Already Exists")
    ALREADY_A_REVERSAL = ("0088", 422, "Transaction Is Already A Reversal")
    AMBIGUOUS_ACCOUNT = ("0090", 422, "Ambiguous Account")
    INVALID_TRANSACTION_STATUS = ("0099", 422, "Invalid Transaction Status")
    LEDGER_NAME_CONFLICT = ("0002", 409, "Ledger Name Conflict")
    INSTRUMENT_CODE_DUPLICATE = ("0003", 409, "Instrument Code Duplicate")
    DUPLICATE_PRODUCT_NAME = ("0015", 409, "Duplicate Product Name")
    ALIAS_UNAVAILABLE = ("0020", 409, "Alias Unavailability")
    REQUEST_TOO_LARGE = ("0122", 413, "Request Entity Too Large")
    THROTTLED = ("0123", 429, "Too Many Requests")
    PERIOD_CLOSED = ("0124", 422, "Period Closed")
    WRITE_CONFLICT = ("0125", 409, "Write Conflict")
    RATE_NOT_FOUND = ("0126", 422, "Rate Not Found")
    RATE_TOO_OLD = ("0127", 422, "Rate Too Old")
    RATE_OUTSIDE_TOLERANCE = ("0128", 422, "Rate Outside Tolerance")
    AMBIGUOUS_RATE = ("0129", 422, "Ambiguous Rate")
    INVALID_WEBHOOK_URL = ("0120", 400, "Invalid Webhook URL")
    WEBHOOK_LIMIT_REACHED = ("0121", 422, "Webhook Subscription Limit Reached")


class LedgerError(Exception):
    """The one application error: a catalogue entry, a sentence for people, optional fields."""

    def __init__(
        self,
        error: ErrorCode,
        description: str | None = None,
        *,
        fields: dict[str, str] | None = None,
    ) -> None:
        self.error = error
        self.description = description or error.title
        self.fields = fields
        super().__init__(f"{error.code} {self.description}")

    @property
    def http_status(self) -> int:
        return self.error.http_status

    def as_body(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "code": self.error.code,
            "title": self.error.title,
            "description": self.description,
        }
        if self.fields:
            body["fields"] = self.fields
        return body


def invalid_parameter(name: str, message: str, description: str | None = None) -> LedgerError:
    """400 0082 for the query parameter ``name``: ``message`` in ``fields``, and as the
    description unless one is given."""
    return LedgerError(
        ErrorCode.INVALID_QUERY_PARAMETER, description or message, fields={name: message}
    )
