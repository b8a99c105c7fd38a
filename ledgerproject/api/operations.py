"""What the OpenAPI schema (/v1/openapi.json, browsed at /v1/docs/) tells a client about each
operation: its summary, its description and examples of its request body, keyed by operation
id; and the descriptions of the components a client reads. The one place for that text: the
postprocessing hook ``describe_for_clients`` (SPECTACULAR_SETTINGS) writes it into the schema,
in place of what drf-spectacular takes from the code's docstrings, which are for maintainers.

The facts come from docs/API.md, docs/TRANSACTIONS.md, docs/TEMPLATES.md, docs/EVENTS.md,
docs/BALANCE-CONTROLS.md and the error catalogue (ledgerproject/errors.py).
tests/api/test_schema_for_clients.py holds every operation to a summary and a description, and
every request body to an example its own schema accepts."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


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

# The demo ledger's templates (transactions/demo, what `make run` loads), read from their files,
# as the examples post to the demo's accounts `@alice`, `@bob` and `@fees/platform` in BRL.
DEMO = Path(__file__).resolve().parents[2] / "transactions" / "demo"


def _demo(name: str) -> str:
    return (DEMO / name).read_text()


PAYMENT_WITH_FEE = _demo("payment_with_fee.tmpl")
FUND = _demo("fund.tmpl")
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
    "first still runs 409 0084."
)
POSTED = (
    "Answers 201 with the transaction and its operations: `SENT`, or `PRE_APPROVED` when "
    "pending (the sources' money is held until commit or cancel)."
)
TRANSACTION_FILTERS = (
    "Filters: `beginDate` and `endDate` (inclusive dates or timestamps, else 400 0077; end "
    "before begin is 400 0083), `assetCode`, `status` (repeatable), `type` (the template code), "
    "`parentTransactionId` and metadata. Each transaction comes with its operations."
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


LEDGER = "organizations_ledgers"
OPERATIONS: dict[str, Operation] = {
    # Organizations
    "organizations_list": Operation(
        "List organizations",
        "The organizations the token reaches: every one for an unlimited token, only its "
        f"organizations and their descendants for a limited one. {LISTED}",
    ),
    "organizations_create": Operation(
        "Create an organization",
        "An organization holds ledgers; it may sit under a parent (`parentOrganizationId`, "
        "422 0039 when unknown). `legalDocument` can never change afterwards. "
        "`address.country` is an ISO 3166-1 alpha-2 code (400 0032). A token limited to "
        f"organizations may not create a top-level one (403 0043). "
        f"{CREATED.format(noun='organization')}",
        json_examples(
            company={
                "legalName": "Acme Pagamentos Ltda",
                "doingBusinessAs": "Acme Pay",
                "legalDocument": "12345678000190",
                "address": ADDRESS,
                "metadata": {"segment": "payments"},
            },
            subsidiary={
                "legalName": "Acme Pagamentos Sul Ltda",
                "legalDocument": "12345678000271",
                "parentOrganizationId": "01966a6e-8f2a-7c3e-9b1d-4f5e6a7b8c9d",
                "address": {"city": "Porto Alegre", "state": "RS", "country": "BR"},
            },
        ),
    ),
    "organizations_retrieve": Operation("Get an organization", f"One organization. {NOT_FOUND}"),
    "organizations_partial_update": Operation(
        "Update an organization",
        "Change names, address, status or metadata, or move the organization under another "
        "parent with `parentOrganizationId` (unknown: 422 0039; a cycle: 422 0008). "
        f"`legalDocument` may not change (400 0006). {PATCHED.format(noun='organization')}",
        json_examples(
            new_address={"doingBusinessAs": "Acme", "address": {**ADDRESS, "line2": "Sala 30"}},
            suspend={"status": {"code": "SUSPENDED", "description": "Contract under review"}},
        ),
    ),
    "organizations_destroy": Operation(
        "Delete an organization",
        "Refused while the organization has active ledgers or active child organizations "
        f"(422 0008). {SOFT_DELETE.format(noun='organization')}",
    ),
    "organizations_events_list": Operation(
        "List the events of an organization",
        "Every event of the organization and of all its ledgers, oldest first: what changed, "
        f"when, and the resource as it was then. {EVENTS}",
    ),
    # Ledgers
    f"{LEDGER}_list": Operation("List ledgers", f"The organization's ledgers. {LISTED}"),
    f"{LEDGER}_create": Operation(
        "Create a ledger",
        "A ledger holds instruments, accounts, templates and transactions. Its `name` is unique "
        f"among the organization's active ledgers (409 0002). {CREATED.format(noun='ledger')}",
        json_examples(brazil={"name": "Operations BRL", "metadata": {"region": "br"}}),
    ),
    f"{LEDGER}_retrieve": Operation("Get a ledger", f"One ledger. {NOT_FOUND}"),
    f"{LEDGER}_partial_update": Operation(
        "Update a ledger",
        "Rename the ledger (409 0002 when another active ledger has the name), or change its "
        f"status or metadata. {PATCHED.format(noun='ledger')}",
        json_examples(rename={"name": "Operations Brazil", "metadata": {"region": "br"}}),
    ),
    f"{LEDGER}_destroy": Operation("Delete a ledger", SOFT_DELETE.format(noun="ledger")),
    # Instruments
    f"{LEDGER}_instruments_list": Operation(
        "List instruments",
        f"The ledger's instruments (currencies, crypto, commodities). Filters: `type`, `code`, "
        f"`status`. {LISTED}",
    ),
    f"{LEDGER}_instruments_create": Operation(
        "Create an instrument",
        "Add an asset accounts can hold. `type` is `currency`, `crypto`, `commodity` or "
        "`others` (400 0040); `code` is upper-case (400 0004), an ISO 4217 code for a currency "
        "(400 0005), unique in the ledger (409 0003). Also creates the instrument's external "
        "account `@external/<CODE>`, the source and destination of money entering and leaving "
        f"the ledger. {CREATED.format(noun='instrument')}",
        json_examples(
            brazilian_real={"name": "Brazilian Real", "type": "currency", "code": "BRL"},
            bitcoin={"name": "Bitcoin", "type": "crypto", "code": "BTC"},
        ),
    ),
    f"{LEDGER}_instruments_retrieve": Operation(
        "Get an instrument", f"One instrument. {NOT_FOUND}"
    ),
    f"{LEDGER}_instruments_partial_update": Operation(
        "Update an instrument",
        "Change `name`, `status` or `metadata`; `type` and `code` are fixed (400 0006). "
        f"{PATCHED.format(noun='instrument')}",
        json_examples(rename={"name": "Real", "metadata": {"iso4217": "986"}}),
    ),
    f"{LEDGER}_instruments_destroy": Operation(
        "Delete an instrument",
        "Refused while an account of the instrument, other than its external one, holds a "
        "balance (422 0012); its external account is deactivated with it. "
        f"{SOFT_DELETE.format(noun='instrument')}",
    ),
    **rates(f"{LEDGER}_instrument_rates", "baseInstrumentCode", "counterInstrumentCode"),
    **rates(f"{LEDGER}_asset_rates", "baseAssetCode", "counterAssetCode"),
    # Products and portfolios
    f"{LEDGER}_products_list": Operation(
        "List products", f"The ledger's products. Filters: `status`. {LISTED}"
    ),
    f"{LEDGER}_products_create": Operation(
        "Create a product",
        "A product groups accounts (an account joins one with `productId`). Its `name` is "
        f"unique among the ledger's active products (409 0015). {CREATED.format(noun='product')}",
        json_examples(checking={"name": "Checking account", "metadata": {"tier": "standard"}}),
    ),
    f"{LEDGER}_products_retrieve": Operation("Get a product", f"One product. {NOT_FOUND}"),
    f"{LEDGER}_products_partial_update": Operation(
        "Update a product",
        "Change `name` (409 0015 when another active product has it), `status` or `metadata`. "
        f"{PATCHED.format(noun='product')}",
        json_examples(rename={"name": "Premium checking", "metadata": {"tier": "premium"}}),
    ),
    f"{LEDGER}_products_destroy": Operation("Delete a product", SOFT_DELETE.format(noun="product")),
    f"{LEDGER}_portfolios_list": Operation(
        "List portfolios", f"The ledger's portfolios. Filters: `entityId`, `status`. {LISTED}"
    ),
    f"{LEDGER}_portfolios_create": Operation(
        "Create a portfolio",
        "A portfolio groups the accounts of one holder (`entityId`, your identifier for them); "
        f"an account joins one with `portfolioId`. {CREATED.format(noun='portfolio')}",
        json_examples(customer={"name": "Alice Souza", "entityId": "customer-8841"}),
    ),
    f"{LEDGER}_portfolios_retrieve": Operation("Get a portfolio", f"One portfolio. {NOT_FOUND}"),
    f"{LEDGER}_portfolios_partial_update": Operation(
        "Update a portfolio",
        f"Change `name`, `entityId`, `status` or `metadata`. {PATCHED.format(noun='portfolio')}",
        json_examples(rename={"name": "Alice Souza Ferreira", "metadata": {"kyc": "verified"}}),
    ),
    f"{LEDGER}_portfolios_destroy": Operation(
        "Delete a portfolio", SOFT_DELETE.format(noun="portfolio")
    ),
    # Accounts and balances
    f"{LEDGER}_accounts_list": Operation(
        "List accounts",
        "The ledger's accounts, each with its balance (`available`, `onHold`, `scale`). "
        "Filters: `alias`, `assetCode`, `type`, `productId`, `portfolioId`, `entityId`, "
        f"`status`. {LISTED}",
    ),
    f"{LEDGER}_accounts_create": Operation(
        "Create an account",
        "Open an account in an instrument of the ledger (`assetCode`, 422 0034 when there is "
        "none). `alias` (`@` and up to 100 of letters, digits, `_-/.`) is how postings name it, "
        "unique in the ledger (409 0020), `@<id>` when left out; `@external/...` aliases and the "
        "type `external` are refused (422 0074). `productId` and `portfolioId` name active "
        "resources of the ledger (422 0036, 0035). `overdraftLimit` lets the balance go that "
        f"far below zero. The account starts at zero. {CREATED.format(noun='account')}",
        json_examples(
            customer_account={
                "assetCode": "BRL",
                "alias": "@alice",
                "name": "Alice checking",
                "type": "deposit",
                "entityId": "customer-8841",
                "metadata": {"branch": "0001"},
            },
            with_overdraft={
                "assetCode": "BRL",
                "alias": "@bob",
                "name": "Bob checking",
                "overdraftLimit": {"amount": 25000, "scale": 2},
            },
        ),
    ),
    f"{LEDGER}_accounts_retrieve": Operation(
        "Get an account", f"One account, with its balance and overdraft limit. {NOT_FOUND}"
    ),
    f"{LEDGER}_accounts_partial_update": Operation(
        "Update an account",
        "Change the account's name, alias (409 0020 when taken), product, portfolio, status, "
        "`allowSending`/`allowReceiving`, overdraft limit (lowering it below the current "
        "overdraft is 422 0008) or metadata. The status decides what the account may do in a "
        "posting: `FROZEN`, `BLOCKED`, `002` and `INACTIVE` neither send nor receive, `003` "
        "only receives. External accounts cannot be changed (422 0074). "
        f"{PATCHED.format(noun='account')}",
        json_examples(
            freeze={"status": {"code": "FROZEN", "description": "Under investigation"}},
            raise_overdraft={"overdraftLimit": {"amount": 50000, "scale": 2}},
        ),
    ),
    f"{LEDGER}_accounts_destroy": Operation(
        "Delete an account",
        "Only at a zero balance (422 0012); external accounts cannot be deleted (422 0074). "
        f"{SOFT_DELETE.format(noun='account')}",
    ),
    "accounts_by_alias": Operation(
        "Get an account by alias",
        "The ledger's active account with this alias, as `GET .../accounts/{id}` answers it. "
        "URL-encode the alias (`@external/BRL` as `%40external%2FBRL`); the leading `@` may be "
        "left out. 404 0007 when no active account has it.",
    ),
    f"{LEDGER}_balances_list": Operation(
        "List balances",
        "Every account's balance (`available`, `onHold`, `scale`), with the account's alias, "
        "asset and type. Filters: `alias`, `assetCode`, `nonZero=true` (available or on hold "
        f"not zero). {PAGED}",
    ),
    f"{LEDGER}_accounts_balances_list": Operation(
        "List an account's balances",
        "The account's balances (one per account), as a list shaped like `GET .../balances`. "
        f"404 0007 for an unknown account. {PAGED}",
    ),
    f"{LEDGER}_accounts_balance_retrieve": Operation(
        "Get an account's balance at a moment",
        "The account's balance as of `at` (a date or timestamp, else 400 0077; now when left "
        "out), at the scale the balance had then. Before the account's first operation it is "
        "zero. 404 0007 for an unknown account.",
    ),
    f"{LEDGER}_accounts_operations_list": Operation(
        "List an account's operations",
        "The account's statement, oldest first: every debit and credit, each with the balance "
        "before (`balance`) and after (`balanceAfter`); each operation's `balance` is the "
        f"previous one's `balanceAfter`. 404 0007 for an unknown account. {PAGED}",
    ),
    f"{LEDGER}_accounts_transactions_list": Operation(
        "List an account's transactions",
        "The transactions with an operation on the account. "
        f"{TRANSACTION_FILTERS} 404 0007 for an unknown account. {PAGED}",
    ),
    # Templates
    "transaction_templates_list": Operation(
        "List transaction templates",
        "The ledger's active templates, as text: `(text, text)` (text/plain; charset=utf-8); "
        "with `Accept: application/json`, a JSON array of templates (code, description, "
        f"pending, text, timestamps). {PAGED}",
    ),
    "transaction_templates_create": Operation(
        "Create a transaction template",
        "Store a template: the text that says which asset moves, from which accounts and to "
        "which (docs/TEMPLATES.md). Postings name it by its `code`, unique among the ledger's "
        f"active templates (409 0027). {TEMPLATE_FORMS} A template that does not parse or "
        "check is 400 0017, with the line and column; its asset must be an instrument of the "
        "ledger. Answers 201 with the text.",
        {
            "text/plain": {"payment with a fee": PAYMENT_WITH_FEE},
            "application/json": {"deposit": {"dsl": FUND}, "as a JSON string": REFUND},
        },
    ),
    f"{LEDGER}_transaction_templates_retrieve": Operation(
        "Get a transaction template",
        "The active template with this code, as text (text/plain; charset=utf-8). 404 0007 when "
        "there is none.",
    ),
    f"{LEDGER}_transaction_types_retrieve": Operation(
        "Get a transaction template by type",
        "The active template with this code, as text (text/plain; charset=utf-8): the same as "
        "`GET .../transaction-templates/{code}`, at the specification's path. 404 0007 when "
        "there is none.",
    ),
    f"{LEDGER}_transaction_templates_update": Operation(
        "Replace a transaction template",
        "Replace the template's text; its code stays (a text naming another code is 400 0006). "
        f"{TEMPLATE_FORMS} A text that does not parse or check is 400 0017; a deleted template "
        "is 400 0013, an unknown code 404 0007. Answers 200 with the new text.",
        {
            "text/plain": {
                "a lower fee description": PAYMENT_WITH_FEE.replace(
                    '"Platform fee"', '"Platform fee (reduced)"'
                )
            },
            "application/json": {"as an object": {"dsl": PAYMENT_WITH_FEE}},
        },
    ),
    f"{LEDGER}_transaction_templates_destroy": Operation(
        "Delete a transaction template",
        "Postings can no longer name it, and its code is free for a new template; transactions "
        "posted from it stay. Answers 204; deleting it again is 400 0013.",
    ),
    # Transactions
    f"{LEDGER}_transactions_list": Operation(
        "List transactions",
        f"The ledger's transactions, oldest first. {TRANSACTION_FILTERS} {PAGED}",
    ),
    f"{LEDGER}_transactions_create": Operation(
        "Post a transaction",
        "Move money with a stored template: name it by `transactionTypeCode` and give its "
        "`variables` (amounts as integers in minor units at the template's scale, accounts by "
        "alias). `metadata` is merged over the template's; `description` and `pending` "
        f"override it. {POSTED} {POSTING_OPTIONS} {POSTING_REFUSALS}",
        json_examples(
            payment_with_a_fee=PAYMENT,
            pending_until_committed={
                **PAYMENT,
                "pending": True,
                "expiresAt": "2030-01-31T23:59:59Z",
                "description": "Card authorization 7731",
            },
            deposit={
                "transactionTypeCode": "FUND",
                "variables": {"amount": 100000, "account": "@alice"},
            },
        ),
    ),
    f"{LEDGER}_transactions_retrieve": Operation(
        "Get a transaction", f"One transaction, with its operations. {NOT_FOUND}"
    ),
    f"{LEDGER}_transactions_commit_create": Operation(
        "Commit a pending transaction",
        "Settle a `PRE_APPROVED` transaction: the held money leaves its sources and reaches its "
        "destinations, and it becomes `SENT` (200). Without a body the whole amount is "
        "committed; an `amount` (at the transaction's scale unless `scale` says another) "
        "commits less and releases the rest, when the transaction has one source and one "
        "destination (else 422 0008). Anything but `PRE_APPROVED`, or a hold past its "
        "`expiresAt`, is 422 0099; an amount above the one held is 422 0008; `scale` without "
        f"`amount` is 400 0009. {NOT_FOUND}",
        json_examples(
            settle_3_00_of_the_hold={"amount": 300},
            at_another_scale={"amount": 3, "scale": 0},
        ),
    ),
    f"{LEDGER}_transactions_revert_create": Operation(
        "Revert a transaction",
        "Undo a transaction with a new one. A `SENT` transaction gets a reversal: sides swapped, "
        "`parentTransactionId` the original (422 0018 if that would overdraw an account). A "
        "`PRE_APPROVED` one is canceled and its holds released. Answers 201 with the new "
        "transaction. Reverting twice is 422 0087, reverting a reversal 422 0088, a `CANCELED` "
        f"transaction 422 0099. {NOT_FOUND}",
    ),
    f"{LEDGER}_transactions_cancel_create": Operation(
        "Cancel a pending transaction",
        "Release the holds of a `PRE_APPROVED` transaction: it becomes `CANCELED`, and a new "
        "transaction gives the held money back to its sources (201, that new transaction). "
        f"Anything but `PRE_APPROVED` is 422 0099. {NOT_FOUND}",
    ),
    f"{LEDGER}_transactions_batch_create": Operation(
        "Post transactions in a batch",
        "Up to 1,000 postings in one request, applied in order (an item sees the balances the "
        "ones before it left). `atomic` true (default): all or nothing, 201 with the "
        "transactions; a refusal answers the first refused item's error, its position in "
        "`fields.index`, and writes nothing. `atomic` false: each item on its own, 200 with "
        "each item's `status` and transaction or error. An item that does not match the "
        "schema makes the whole batch 400 (its position in `fields.index`), in either mode. An "
        "item's `idempotencyKey` works as the header does for one posting; the "
        "`Idempotency-Key` header applies to the whole batch.",
        json_examples(
            fund_then_pay={
                "atomic": True,
                "transactions": [
                    {
                        "transactionTypeCode": "FUND",
                        "variables": {"amount": 10000, "account": "@alice"},
                    },
                    {**PAYMENT, "idempotencyKey": "order-42"},
                ],
            },
            each_on_its_own={
                "atomic": False,
                "transactions": [
                    {**PAYMENT, "idempotencyKey": "order-43"},
                    {
                        "transactionTypeCode": "PAYMENT_WITH_FEE",
                        "idempotencyKey": "order-44",
                        "variables": {
                            "amount": 990,
                            "fee": 10,
                            "source": "@bob",
                            "destination": "@alice",
                        },
                    },
                ],
            },
        ),
    ),
    "transactions_inline_dsl": Operation(
        "Post a transaction with its template inline",
        "Post from a template written in the request, in the template language, without "
        'storing it. With Content-Type application/json: `{"dsl": "<text>", "variables": '
        "{...}}` plus the options of any posting (`metadata`, `description`, `pending`, "
        "`expiresAt`, `parentTransactionId`). The text alone (text/plain, no Content-Type, a "
        "JSON string, or a multipart/form-data upload whose part is named `dsl` or is its one "
        "file) posts a template that uses no variables. A text that does not parse or check is "
        f"400 0017. {POSTED} {POSTING_OPTIONS} {POSTING_REFUSALS}",
        {
            "application/json": {
                "pix with variables": {
                    "dsl": PIX,
                    "variables": {"amount": 4990, "source": "@alice", "destination": "@bob"},
                    "metadata": {"endToEndId": "E1234567820250101"},
                },
            },
            "text/plain": {"a refund with fixed amounts": REFUND},
        },
    ),
    "transactions_inline_json": Operation(
        "Post a transaction with its template as JSON",
        "Post from a template written in the request as JSON that maps one to one onto the "
        "template language (docs/CLIENTS.md), without storing it, plus `variables`, "
        "`parentTransactionId` and `expiresAt`. An error names the JSON path of the offending "
        "value: a failed check is 400 0017, a missing key 400 0009, an unknown key 400 0053. "
        f"{POSTED} {POSTING_OPTIONS} {POSTING_REFUSALS}",
        json_examples(
            payment_with_a_fee={
                "chartOfAccountsGroupName": "PIX",
                "description": "Payment",
                "metadata": {"channel": "api"},
                "send": {
                    "asset": "BRL",
                    "amount": {"terms": [{"variable": "amount"}, {"literal": 50}], "scale": 2},
                    "source": [
                        {
                            "account": {"variable": "source"},
                            "asset": "BRL",
                            "amount": {
                                "terms": [{"variable": "amount"}, {"literal": 50}],
                                "scale": 2,
                            },
                            "chartOfAccounts": "PIX_DEBIT",
                        }
                    ],
                },
                "distribute": {
                    "to": [
                        {
                            "account": {"alias": "@bob"},
                            "asset": "BRL",
                            "amount": {"terms": [{"variable": "amount"}], "scale": 2},
                            "description": "Pix of $amount",
                        }
                    ],
                    "remaining": {"account": {"alias": "@fees/platform"}},
                },
                "variables": {"amount": 10000, "source": "@alice"},
            },
        ),
    ),
    f"{LEDGER}_charts_create": Operation(
        "Draw a chart",
        "Figures of the ledger; nothing is written (a read-only token may draw charts). "
        "`totalTransactions`: the `SENT` transactions created between `startDate` and `endDate` "
        "(inclusive); `transactionsByStatus`: one count per status; `totalAmountByAsset` (or "
        "`totalAmountByInstrument`): available plus on hold over the active non-external "
        "accounts, per asset, largest first, `?limit=` items (1 to 100, default 3), no dates; "
        "`overdraftByAsset`: what overdrawn accounts owe, per asset. The first two need both "
        "dates (400 0009); an end before the start is 400 0083, an unknown type 400 0031, a "
        "`limit` out of range 400 0082.",
        json_examples(
            january_by_status={
                "type": "transactionsByStatus",
                "startDate": "2025-01-01",
                "endDate": "2025-01-31",
            },
            holdings_per_asset={"type": "totalAmountByAsset"},
        ),
    ),
    # Events and webhooks
    f"{LEDGER}_events_list": Operation(
        "List the events of a ledger",
        f"Every event of the ledger, oldest first: what changed, when, and the resource as it "
        f"was then. {EVENTS}",
    ),
    **webhooks("organizations_webhooks", "organization and all its ledgers"),
    **webhooks(f"{LEDGER}_webhooks", "ledger only"),
}

# Components a client reads a description of. Any other component's description (taken from
# the code's docstrings) is left out; an enumeration keeps its list of values.
COMPONENTS: dict[str, str] = {
    "AccountCreateInRequest": "A new account. Aliases under `@external/` and the type "
    "`external` are refused (422 0074): those accounts come with their instrument.",
    "PatchedAccountUpdateInRequest": "Changes to an account: the fields sent change, the others "
    "stay. A new `alias` follows the create rules (409 0020, 422 0074).",
    "AddressOut": "The address as it was sent: the fields it holds, and no others (`line2` is "
    "null only when it was sent null).",
    "OverdraftLimitInRequest": "How far below zero the account's available balance may go, in "
    "minor units at `scale`: 25000 at scale 2 is 250.00.",
    "CommitInRequest": "Commit less than the hold: settle only `amount` (at `scale`, by default "
    "the transaction's) and release the rest. No body commits the whole amount.",
    "EventOut": "An event: its type, the organization and ledger it happened in, when, and the "
    "resource as it was then (`data`). Keep its `cursor` to read the events after it.",
    "InlineDslInRequest": "A posting whose template is in the request, as template-language "
    "text (`dsl`), with its variables and the options of any posting.",
    "InstrumentCreateInRequest": "A new instrument: `type` and `code` are fixed once created.",
    "TemplateTextInRequest": 'Template text as a JSON object, `{"dsl": "<text>"}` (a JSON '
    "string of the text is accepted too).",
    "TransactionInRequest": "A posting from a stored template: its code and variables, and "
    "optional metadata, description, pending, parent and expiry.",
    "TransactionBatchInRequest": "Up to 1,000 postings. `atomic` (default true): all or none, "
    "answered 201 with the transactions; false: each on its own, answered 200 with each item's "
    "status and transaction or error, in order.",
    "TransactionBatchItemInRequest": "One posting of a batch: a posting body, plus its own "
    "optional idempotency key.",
    "BatchItemOut": "One item of a non-atomic batch's answer: its position, its status, and the "
    "transaction posted or the error that refused it.",
    "LedgerBalanceOut": "One account's balance as a resource of its own.",
    "Error": "Every refusal: a four-digit `code` from the error catalogue, its `title`, a "
    "`description` for people and, on validation errors, `fields` naming each field refused.",
}


def describe_for_clients(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """A postprocessing hook: each operation's summary, description and request examples from
    ``OPERATIONS`` (an operation missing there has none, rather than a maintainer's text), and
    the components' descriptions from ``COMPONENTS``."""
    for item in result.get("paths", {}).values():
        for operation in item.values():
            if not isinstance(operation, dict) or "operationId" not in operation:
                continue
            operation.pop("summary", None)
            operation.pop("description", None)
            entry = OPERATIONS.get(operation["operationId"])
            if entry is None:
                continue
            operation["summary"] = entry.summary
            operation["description"] = entry.description
            content = operation.get("requestBody", {}).get("content", {})
            for media, named in entry.examples.items():
                if media in content:
                    content[media]["examples"] = {
                        name: {"value": value} for name, value in named.items()
                    }
    for name, component in result.get("components", {}).get("schemas", {}).items():
        if name in COMPONENTS:
            component["description"] = COMPONENTS[name]
        elif "enum" not in component:
            component.pop("description", None)
    return result
