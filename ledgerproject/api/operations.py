"""What the OpenAPI schema (/v1/openapi.json, browsed at /v1/docs/) tells a client about each
operation: its summary, its description and examples of its request body, keyed by operation
id; and the descriptions of the components a client reads. The one place for that text: the
postprocessing hook ``describe_for_clients`` (SPECTACULAR_SETTINGS) writes it into the schema,
in place of what drf-spectacular takes from the code's docstrings, which are for maintainers.

The text lives in three modules: this one (the resources, the components and the hook),
``operations_postings`` (templates, transactions, events, webhooks) and ``operation_text``
(the shared phrases and example bodies). The facts come from docs/API.md, docs/TRANSACTIONS.md,
docs/TEMPLATES.md, docs/EVENTS.md, docs/BALANCE-CONTROLS.md and the error catalogue
(ledgerproject/errors.py).
tests/api/test_schema_for_clients.py holds every operation to a summary and a description, and
every request body to an example its own schema accepts."""

from __future__ import annotations

from typing import Any

from ledgerproject.api.operation_text import (
    ADDRESS,
    CREATED,
    EVENTS,
    LEDGER,
    LISTED,
    NOT_FOUND,
    PAGED,
    PATCHED,
    SOFT_DELETE,
    TRANSACTION_FILTERS,
    Operation,
    json_examples,
    rates,
)
from ledgerproject.api.operations_postings import POSTING_OPERATIONS

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
        "Rename the ledger (409 0002 when another active ledger has the name), change its "
        "status or metadata, or close its books through a day that is over (`closedThrough`, "
        "in its `timeZone`; else 400 0047): nothing effective on or before it is written "
        "afterwards (422 0124). Moving `closedThrough` back or clearing it reopens the books: "
        "only a token that is neither limited to organizations nor read-only may (403 0043). "
        f"{PATCHED.format(noun='ledger')}",
        json_examples(
            rename={"name": "Operations Brazil", "metadata": {"region": "br"}},
            close_october={"closedThrough": "2026-10-31"},
        ),
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
        "`status`, `parentAccountId` (the accounts right under that one in the account tree). "
        "`rolledUp=true` adds `rolledUpBalances` to each: its balance plus all its "
        f"descendants', per asset. {LISTED}",
    ),
    f"{LEDGER}_accounts_create": Operation(
        "Create an account",
        "Open an account in an instrument of the ledger (`assetCode`, 422 0034 when there is "
        "none). `alias` (`@` and up to 100 of letters, digits, `_-/.`) is how postings name it, "
        "unique in the ledger (409 0020), `@<id>` when left out; `@external/...` aliases and the "
        "type `external` are refused (422 0074). `productId` and `portfolioId` name active "
        "resources of the ledger (422 0036, 0035). `parentAccountId` places it under an active "
        "account of the ledger in its account tree, at most 10 levels deep (else 422 0008). "
        "`overdraftLimit` lets the balance go that far below zero. The account starts at zero. "
        f"{CREATED.format(noun='account')}",
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
        "only receives. A new `parentAccountId` moves the account, with everything under it, in "
        "the account tree (null: to the top); never under itself, nor deeper than 10 levels "
        "(422 0008). External accounts cannot be changed (422 0074). "
        f"{PATCHED.format(noun='account')}",
        json_examples(
            freeze={"status": {"code": "FROZEN", "description": "Under investigation"}},
            raise_overdraft={"overdraftLimit": {"amount": 50000, "scale": 2}},
        ),
    ),
    f"{LEDGER}_accounts_destroy": Operation(
        "Delete an account",
        "Only at a zero balance (422 0012) and with no active account under it in the account "
        "tree (422 0008); external accounts cannot be deleted (422 0074). "
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
    f"{LEDGER}_balance_monitors_list": Operation(
        "List balance monitors",
        f"The ledger's balance monitors. Filters: `accountId`, `status`. {LISTED}",
    ),
    f"{LEDGER}_balance_monitors_create": Operation(
        "Create a balance monitor",
        "Watch one account's `available`, `onHold` or `overdraftUsed` against a threshold: the "
        "event `balance_monitor.triggered` is written when a change of the balance makes the "
        "condition (`below`, `above`) true, or moves the measure across the threshold "
        "(`crossing`); again only after it was false in between. A monitor made while its "
        "condition holds waits for the next crossing. At most 10 per account (422 0008); the "
        "account must be an active account of the ledger (422 0008). "
        f"{CREATED.format(noun='balance monitor')}",
        json_examples(
            low_funds={
                "accountId": "01a2a7f0-6c4e-7d3a-9b1e-2f4c5d6e7f80",
                "measure": "available",
                "condition": "below",
                "threshold": {"amount": 50000, "scale": 2},
                "description": "Alice is running low",
            },
            overdraft={
                "accountId": "01a2a7f0-6c4e-7d3a-9b1e-2f4c5d6e7f80",
                "measure": "overdraftUsed",
                "condition": "above",
                "threshold": {"amount": 0, "scale": 2},
            },
        ),
    ),
    f"{LEDGER}_balance_monitors_retrieve": Operation(
        "Get a balance monitor",
        "One balance monitor, with `conditionHolds` (whether its condition held when the "
        f"balance was last seen) and `lastTriggeredAt`. {NOT_FOUND}",
    ),
    f"{LEDGER}_balance_monitors_partial_update": Operation(
        "Update a balance monitor",
        "Change `threshold`, `condition`, `description`, `status` or `metadata`; `accountId` "
        "and `measure` are 400 0006. A new threshold or condition takes the balance as it is "
        f"now, without firing. {PATCHED.format(noun='balance monitor')}",
        json_examples(raise_it={"threshold": {"amount": 100000, "scale": 2}}),
    ),
    f"{LEDGER}_balance_monitors_destroy": Operation(
        "Delete a balance monitor",
        f"It watches nothing from then on. {SOFT_DELETE.format(noun='balance monitor')}",
    ),
    f"{LEDGER}_accounts_balances_list": Operation(
        "List an account's balances",
        "The account's balances (one per account), as a list shaped like `GET .../balances`. "
        f"404 0007 for an unknown account. {PAGED}",
    ),
    f"{LEDGER}_accounts_balance_retrieve": Operation(
        "Get an account's balance at a moment",
        "The account's balance effective at `at`, as the ledger knew it at `asOf` (dates or "
        "timestamps, else 400 0077; a date is the end of that day, UTC; both now when left "
        "out), at the scale the last operation it counts left. Before the account's first "
        "operation it is zero. 404 0007 for an unknown account.",
    ),
    f"{LEDGER}_accounts_rolled_up_balance_retrieve": Operation(
        "Get an account's rolled-up balance",
        "The account's balance plus those of every account under it in the account tree, one "
        "entry per asset (by code), each at the largest scale among them, exactly. Effective at "
        "`at` (a date or timestamp, else 400 0077; a date is the end of that day, UTC; now when "
        "left out), as the ledger knows it now. 404 0007 for an unknown account.",
    ),
    f"{LEDGER}_accounts_operations_list": Operation(
        "List an account's operations",
        "The account's statement, oldest first: every debit and credit, each with the balance "
        "before (`balance`) and after (`balanceAfter`); each operation's `balance` is the "
        "previous one's `balanceAfter`. `order=effective` reads it in the order the operations "
        "took effect, each with the balance effective just after it (`runningBalance`). 404 "
        f"0007 for an unknown account. {PAGED}",
    ),
    f"{LEDGER}_accounts_transactions_list": Operation(
        "List an account's transactions",
        "The transactions with an operation on the account. "
        f"{TRANSACTION_FILTERS} 404 0007 for an unknown account. {PAGED}",
    ),
    **POSTING_OPERATIONS,
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
