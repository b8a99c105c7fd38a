"""The vocabulary of the schema's text for clients (``operations``): the shape of an
operation's text, phrases several operations share, and realistic bodies for the examples."""

from dataclasses import dataclass, field
from typing import Any

from templates_dsl.examples import examples


@dataclass(frozen=True)
class Operation:
    summary: str
    description: str
    # Media type -> example name -> the body.
    examples: dict[str, dict[str, Any]] = field(default_factory=dict)


def json_examples(**named: Any) -> dict[str, dict[str, Any]]:
    """Examples of a JSON body, by name (underscores read as spaces)."""
    return {"application/json": {name.replace("_", " "): value for name, value in named.items()}}


# Phrases several operations share.
PAGED = (
    "Keyset-paged: `limit` (1 to 1,000, default 100, else 400 0080) and `cursor`; when more "
    "exist, the answer's `Link` header holds the next page's URL and `X-Next-Cursor` its cursor. "
    "`sort_order=desc` reverses the order (oldest first by default)."
)
LISTED = (
    f"{PAGED} `deleted=false` leaves deleted ones out; `metadata.<key>=<value>` (or "
    "`metadata=<key>:<value>`, repeatable) keeps those whose metadata matches."
)
NOT_FOUND = "404 0007 when it does not exist or the token does not reach it."
CREATED = (
    "Answers 201 with the {noun}. A missing required field is 400 0009, an unknown one 400 "
    "0053, a value of the wrong type 400 0047."
)
PATCHED = (
    "Only the fields sent change; `metadata`, when sent, replaces the metadata whole. A field "
    "that may not change is 400 0006, an unknown one 400 0053; a deleted {noun} is 400 0013. "
    "Answers 200 with the {noun} as it is now."
)
SOFT_DELETE = (
    "A soft delete: the {noun} stays readable, with `deletedAt` set, and answers 204. Deleting "
    "it again is 400 0013."
)
LEDGER_EVENTS = "Writes the event `{event}` (docs/EVENTS.md)."

# The demo ledger's templates (``templates_dsl/examples``, those `make run` loads), as the
# examples post to the demo's accounts `@alice`, `@bob` and `@fees/platform` in BRL.
PAYMENT_WITH_FEE = examples()["payment_with_fee"]
FUND = examples()["fund"]
REFUND = """(transaction-template v1
  (chart-of-accounts-group-name REFUNDS)
  (code REFUND)
  (description "Refund of order 42")
  (send BRL 1500|2
    (source (from @bob :amount BRL 1500|2 (chart-of-accounts REFUND_DEBIT))))
  (distribute (to @alice :amount BRL 1500|2 (chart-of-accounts REFUND_CREDIT))))
"""
PIX = """(transaction-template v1
  (chart-of-accounts-group-name PIX)
  (code PIX)
  (description "Pix transfer")
  (send BRL $amount|2 (source (from $source :amount BRL $amount|2)))
  (distribute (to $destination :amount BRL $amount|2 (description "Pix from $source"))))
"""

PAYMENT = {
    "transactionTypeCode": "PAYMENT_WITH_FEE",
    "variables": {"amount": 2500, "fee": 100, "source": "@alice", "destination": "@bob"},
    "metadata": {"order": "42"},
}
ADDRESS = {
    "line1": "Av. Paulista, 1000",
    "line2": "Sala 12",
    "zipCode": "01310-100",
    "city": "São Paulo",
    "state": "SP",
    "country": "BR",
}
WEBHOOK = {
    "url": "https://hooks.example.com/ledger",
    "eventTypes": ["transaction.posted", "transaction.reverted", "transaction.canceled"],
    "description": "Payments service",
    "metadata": {"team": "payments"},
}
WEBHOOK_CHANGE = {"status": "PAUSED", "description": "Paused during the receiver's migration"}

# Template text comes in several forms; the schema names two, the description says all.
TEMPLATE_FORMS = (
    "The body is the template text whatever its Content-Type (text/plain, "
    "application/octet-stream, none); or, with Content-Type application/json, the text as a "
    'JSON string or `{"dsl": "<text>"}`; or a multipart/form-data upload whose one part '
    "(named `dsl`, or the only file part) is the text. The text is at most 64 KiB of UTF-8 "
    "(else 413 0122) and not blank (400 0049)."
)
POSTING_REFUSALS = (
    "Refusals: 404 0007 for an unknown template code; 400 0009, 0053 or 0047 for a variable "
    "missing, not used by the template, or not an amount; 422 0073 when the amounts do not add "
    "up; 422 0090 for the same account on both sides; 422 0085, 0030 or 0034 for an unknown "
    "alias, an account of another asset or a missing instrument; 422 0024 when an account's "
    "status or `allowSending`/`allowReceiving` forbid its leg; 422 0018 when a source would go "
    "below its overdraft limit; 422 0021 for an unknown `parentTransactionId`."
)
POSTING_OPTIONS = (
    "`?dryRun=true` runs every check and answers 200 with what would be written (`dryRun: "
    "true`, header `Dry-Run: true`), writing nothing. An `Idempotency-Key` header makes a "
    "repeat with the same body answer the first answer again (header `Idempotent-Replayed: "
    "true`) and post nothing; the same key with another body is 422 0084, a repeat while the "
    "first still runs 409 0084. `effectiveAt` says when the money moved, if before now (not "
    "in the future, 400 0047; not in a closed period, 422 0124); balances are checked as "
    "posted. `scheduledFor` (a future time) keeps the posting to be made then: 202 with the "
    "scheduled posting (`SCHEDULED`), nothing moved yet. `commitAt`, on a pending posting, "
    "commits it then (docs/TIME.md)."
)
POSTED = (
    "Answers 201 with the transaction and its operations: `SENT`, or `PRE_APPROVED` when "
    "pending (the sources' money is held until commit or cancel)."
)
TRANSACTION_FILTERS = (
    "Filters: `beginDate` and `endDate` (when posted: inclusive dates or timestamps, else 400 "
    "0077; end before begin is 400 0083), `effectiveFrom` and `effectiveTo` (when effective), "
    "`assetCode`, `status` (repeatable), `type` (the template code), `parentTransactionId` "
    "and metadata. Each transaction comes with its operations."
)
EVENTS = (
    "Filters: `type` (repeatable; an unknown type is 400 0082), `beginDate` and `endDate` "
    "(inclusive, on `createdAt`). To follow the log, keep the `cursor` of the last event you "
    "processed and ask for the events after it (`?cursor=`): you see every event exactly once, "
    "in order; an empty page means nothing new yet. `limit` is 1 to 1,000 (default 100); a "
    '`Link: <...>; rel="next"` header says when more exist.'
)
WEBHOOK_CREATE = (
    "`url` is http or https with a public host (a loopback, private or link-local address is "
    '400 0120); `eventTypes` lists catalogue types, or `["*"]` for all. The answer (201) '
    "holds the `secret` that signs the deliveries (`Ledger-Signature`), shown this once: store "
    "it. An organization has at most 20 subscriptions, its own and its ledgers' together "
    "(422 0121)."
)
WEBHOOK_ITEM = "A subscription, with how its deliveries are going (`consecutiveFailures`, " + (
    "`lastError`, `suspendedUntil`); the secret is never shown again."
)
WEBHOOK_PATCH = (
    "Change `url`, `eventTypes`, `status` (`ACTIVE` or `PAUSED`), `description` or `metadata`. "
    "A paused subscription's deliveries wait and go out when it is active again; changing the "
    "`url` or setting `status: ACTIVE` lifts a suspension at once. A new `url` is checked as at "
    "creation (400 0120)."
)
WEBHOOK_DELETE = "Stop the deliveries: a deleted subscription gets nothing more. " + (
    "Answers 204; deleting it again is 400 0013."
)
RATE = (
    "A rate is one record with two faces: `baseInstrumentCode`/`counterInstrumentCode` "
    "(/instrument-rates) or `baseAssetCode`/`counterAssetCode` (/asset-rates); one made through "
    "either path is read, changed and deleted through both."
)
RATE_CREATE = (
    "Both codes name active instruments of the ledger (422 0034) and differ; `amount` is a "
    "positive integer at `scale` (0 to 18): 512 at scale 2 is 5.12 counter units per base "
    "unit. One active rate per pair and `source` (409 0028)."
)
RATE_PATCH = (
    "Change `amount`, `scale`, `source`, `status` or `metadata`; the codes may not change "
    "(400 0006)."
)
RATE_DELETE = "Deactivate the rate: it keeps its record, with status `INACTIVE` and " + (
    "`deletedAt` set, and answers 204. Deleting it again is 400 0013."
)


def rates(prefix: str, base: str, counter: str) -> dict[str, Operation]:
    """The five operations of one face of the rates."""
    pair = {base: "USD", counter: "BRL"}
    return {
        f"{prefix}_list": Operation(
            "List exchange rates",
            f"The ledger's rates. {RATE} Filters: the two codes, `source`, `status`. {LISTED}",
        ),
        f"{prefix}_create": Operation(
            "Create an exchange rate",
            f"Record the rate of one instrument in another. {RATE_CREATE} "
            f"{CREATED.format(noun='rate')} {RATE}",
            json_examples(
                dollar_in_reais={**pair, "amount": 512, "scale": 2, "source": "PTAX"},
            ),
        ),
        f"{prefix}_retrieve": Operation("Get an exchange rate", f"One rate. {RATE} {NOT_FOUND}"),
        f"{prefix}_partial_update": Operation(
            "Update an exchange rate",
            f"{RATE_PATCH} {PATCHED.format(noun='rate')}",
            json_examples(new_quote={"amount": 5175, "scale": 3, "source": "PTAX"}),
        ),
        f"{prefix}_destroy": Operation("Delete an exchange rate", RATE_DELETE),
    }


def webhooks(prefix: str, scope: str) -> dict[str, Operation]:
    """The five operations of the webhook subscriptions of an organization or of a ledger."""
    return {
        f"{prefix}_list": Operation(
            "List webhook subscriptions",
            f"The subscriptions of the {scope}, with how their deliveries are going. {LISTED}",
        ),
        f"{prefix}_create": Operation(
            "Subscribe to events by webhook",
            f"Have events of the {scope} pushed, signed, to a URL of yours (docs/EVENTS.md); "
            "the subscription receives the events written after it. Delivery is at least once: "
            f"deduplicate on `Ledger-Event-Id`. {WEBHOOK_CREATE}",
            json_examples(payments_service=WEBHOOK, every_event={**WEBHOOK, "eventTypes": ["*"]}),
        ),
        f"{prefix}_retrieve": Operation(
            "Get a webhook subscription", f"{WEBHOOK_ITEM} {NOT_FOUND}"
        ),
        f"{prefix}_partial_update": Operation(
            "Update a webhook subscription",
            f"{WEBHOOK_PATCH} {PATCHED.format(noun='subscription')}",
            json_examples(pause=WEBHOOK_CHANGE, resume={"status": "ACTIVE"}),
        ),
        f"{prefix}_destroy": Operation("Delete a webhook subscription", WEBHOOK_DELETE),
    }


# The operation ids of a ledger's resources begin with this.
LEDGER = "organizations_ledgers"
