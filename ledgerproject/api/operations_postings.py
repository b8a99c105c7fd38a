"""The schema's text for clients (``operations``) of the posting operations: templates,
transactions, events and webhooks."""

from __future__ import annotations

from ledgerproject.api.operation_text import (
    EVENTS,
    FUND,
    LEDGER,
    NOT_FOUND,
    PAGED,
    PAYMENT,
    PAYMENT_WITH_FEE,
    PIX,
    POSTED,
    POSTING_OPTIONS,
    POSTING_REFUSALS,
    REFUND,
    TEMPLATE_FORMS,
    TRANSACTION_FILTERS,
    Operation,
    json_examples,
    webhooks,
)

POSTING_OPERATIONS: dict[str, Operation] = {
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
            on_the_first_of_the_month={**PAYMENT, "scheduledFor": "2030-02-01T09:00:00Z"},
            held_then_committed_by_itself={
                **PAYMENT,
                "pending": True,
                "commitAt": "2030-01-02T09:00:00Z",
                "expiresAt": "2030-01-31T23:59:59Z",
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
        "`amount` is 400 0009. `effectiveAt`: when the settlement took effect (by default, "
        f"now; not before the hold's, nor in a closed period). {NOT_FOUND}",
        json_examples(
            settle_3_00_of_the_hold={"amount": 300},
            at_another_scale={"amount": 3, "scale": 0},
            settled_yesterday={"effectiveAt": "2026-10-30T18:00:00Z"},
        ),
    ),
    f"{LEDGER}_transactions_revert_create": Operation(
        "Revert a transaction",
        "Undo a transaction with a new one. A `SENT` transaction gets a reversal: sides swapped, "
        "`parentTransactionId` the original (422 0018 if that would overdraw an account). A "
        "`PRE_APPROVED` one is canceled and its holds released. Answers 201 with the new "
        "transaction, effective now unless the body says `effectiveAt` (a transaction of a "
        "closed period is reverted in the open one). Reverting twice is 422 0087, reverting a "
        f"reversal 422 0088, a `CANCELED` transaction 422 0099. {NOT_FOUND}",
        json_examples(now={}, as_of_yesterday={"effectiveAt": "2026-10-30T18:00:00Z"}),
    ),
    f"{LEDGER}_transactions_cancel_create": Operation(
        "Cancel a pending transaction",
        "Release the holds of a `PRE_APPROVED` transaction: it becomes `CANCELED`, and a new "
        "transaction gives the held money back to its sources (201, that new transaction), "
        "effective now unless the body says `effectiveAt`. Anything but `PRE_APPROVED` is 422 "
        f"0099. {NOT_FOUND}",
        json_examples(now={}, as_of_yesterday={"effectiveAt": "2026-10-30T18:00:00Z"}),
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
    f"{LEDGER}_trial_balance_retrieve": Operation(
        "Get the trial balance",
        "Every account's debits (what left it) and credits (what reached it) effective at "
        "`at` (a day is its end in the ledger's time zone; now when left out), and its balance, "
        "per asset and chart of accounts, exact at each asset's largest scale; each asset's "
        "debits equal its credits. Holds move nothing between accounts until committed. "
        "docs/TIME.md.",
    ),
    f"{LEDGER}_period_report_retrieve": Operation(
        "Get a period report",
        "Every account's opening balance (effective before `from`), debits and credits "
        "effective from `from` to `to` (days in the ledger's time zone, or timestamps; both "
        "required, 400 0009; `to` before `from` is 400 0083) and closing balance, per asset "
        "and chart of accounts. docs/TIME.md.",
    ),
    # Scheduled postings
    f"{LEDGER}_scheduled_postings_list": Operation(
        "List scheduled postings",
        "The ledger's scheduled postings (postings sent with `scheduledFor`), oldest first, "
        f"each with its status and, once due, its transaction or refusal. `status` filters. "
        f"{PAGED}",
    ),
    f"{LEDGER}_scheduled_postings_retrieve": Operation(
        "Get a scheduled posting",
        "One scheduled posting: `SCHEDULED` until its `scheduledFor`; then `POSTED` "
        "(`transactionId`) or `FAILED` (`error`, as the posting was refused then); or "
        f"`CANCELED`. docs/TIME.md. {NOT_FOUND}",
    ),
    f"{LEDGER}_scheduled_postings_cancel_create": Operation(
        "Cancel a scheduled posting",
        "Before its time: it becomes `CANCELED` and is never posted (200, the scheduled "
        "posting). One already `POSTED`, `FAILED` or `CANCELED` is 422 0099; a cancel and the "
        f"scheduler never both act on it. {NOT_FOUND}",
    ),
    # Events and webhooks
    f"{LEDGER}_events_list": Operation(
        "List the events of a ledger",
        f"Every event of the ledger, oldest first: what changed, when, and the resource as it "
        f"was then. {EVENTS}",
    ),
    # The journal
    f"{LEDGER}_journal_list": Operation(
        "List the blocks of a ledger's journal",
        "The ledger's journal, oldest block first: every change to the ledger's books is an "
        "entry (its event, as the events list sends it), and entries are sealed, within a few "
        "seconds, into blocks chained by their hashes. Each block gives its height, the Merkle "
        "root of its entries, the previous block's hash, its own hash and its entry count. "
        "Keep the newest hash you read: a transaction's proof checks against it. How the hashes "
        "are made, and a verifier to copy, are in docs/BOOKS.md. Keyset-paged.",
    ),
    f"{LEDGER}_transactions_proof_retrieve": Operation(
        "Prove a transaction is in the journal",
        "For each journal entry about the transaction (its posting, and its commit if it was "
        "held), the entry itself, its hash, its position in its block, the Merkle path from it "
        "to the block's root, and the block. With a block hash you keep (from the journal or a "
        "block.sealed event), a client checks the proof itself, trusting nothing else. "
        "200 once every entry is sealed; 202 with Retry-After while one waits for its block "
        "(sealed false, unsealedEntries). 404 0007 for a transaction the ledger does not have.",
    ),
    **webhooks("organizations_webhooks", "organization and all its ledgers"),
    **webhooks(f"{LEDGER}_webhooks", "ledger only"),
}
