"""The bench ledger: one organization and ledger in BRL, accounts ``@b1`` .. ``@bN`` and
``@hot``, each funded through the posting service, the templates the scenarios post, and an
API token. Runs in-process with ``ledgerproject.settings_bench``."""

from __future__ import annotations

from dataclasses import dataclass

from instruments.services import instrument_create
from organizations.contents import account_create
from organizations.services import ledger_create, organization_create, token_create
from templates_dsl.services import template_create
from transactions import engine

FUNDING = 10**12  # minor units per account: enough that no scenario ever runs out

TRANSFER = """(transaction-template v1
  (chart-of-accounts-group-name BENCH)
  (code {code})
  (pending {pending})
  (send BRL $amount|2
    (source (from $source :amount BRL $amount|2 (chart-of-accounts DEBIT))))
  (distribute (to $destination :amount BRL $amount|2 (chart-of-accounts CREDIT))))"""

FUND = """(transaction-template v1
  (chart-of-accounts-group-name BENCH)
  (code FUND)
  (send BRL $amount|2
    (source (from @external/BRL :amount BRL $amount|2 (chart-of-accounts CASH_IN))))
  (distribute (to $account :amount BRL $amount|2 (chart-of-accounts DEPOSITS))))"""


@dataclass(frozen=True)
class BenchLedger:
    organization_id: str
    ledger_id: str
    token: str
    accounts: int

    @property
    def path(self) -> str:
        return f"/v1/organizations/{self.organization_id}/ledgers/{self.ledger_id}"


def seed_ledger(*, accounts: int) -> BenchLedger:
    organization = organization_create(legal_name="Bench", legal_document="BENCH-1")
    ledger = ledger_create(organization=organization, name="Bench")
    instrument_create(ledger=ledger, name="Brazilian real", type="currency", code="BRL")
    template_create(ledger=ledger, text=TRANSFER.format(code="TRANSFER", pending="false"))
    template_create(ledger=ledger, text=TRANSFER.format(code="TRANSFER_HELD", pending="true"))
    template_create(ledger=ledger, text=FUND)
    aliases = [f"@b{n}" for n in range(1, accounts + 1)] + ["@hot"]
    for alias in aliases:
        account_create(ledger=ledger, asset_code="BRL", alias=alias)
    # Statistics before the postings: a statement prepared on tables the planner believes
    # empty keeps that plan on the connection until they are analyzed, and the plan for the
    # locking statement then visits every balance of the ledger per posting (autovacuum, which
    # would analyze them, may be off: docs/OPERATORS.md). Funding 1,000 accounts took 188 s
    # that way, against a few seconds.
    settle()
    for alias in aliases:
        engine.post(
            ledger,
            engine.PostingRequest(
                template_code="FUND", variables={"amount": FUNDING, "account": alias}
            ),
        )
    _, raw = token_create(name=f"bench-{ledger.pk.hex[:8]}")
    settle()
    return BenchLedger(str(organization.pk), str(ledger.pk), raw, accounts)


def settle() -> None:
    """``VACUUM ANALYZE`` the freshly seeded database, as a deployed one has statistics: without
    them the first measured round ran on plans made for empty tables (the balance update a
    sequential scan), until autovacuum analyzed the tables in the middle of the run, and the
    rounds disagreed by a third."""
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
