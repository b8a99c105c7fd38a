"""A dry run: every check of a posting and the operations it would write, with nothing written
and no lock taken (``engine.post(..., dry_run=True)``)."""

from __future__ import annotations

import uuid

from django.utils import timezone

from organizations.contents import conversion_account, new_balance
from organizations.models import Account, Balance, Ledger
from organizations.services import ensure_ledger_active
from templates_dsl.planner import PostingPlan
from transactions.guards import check_instrument
from transactions.lookups import PostingLookups
from transactions.money import BalanceBook, assets_of
from transactions.prepare import (
    Outcome,
    PostingRequest,
    attach_operations,
    balances_of,
    opening_steps,
    prepare,
    stamp_posted,
)


def simulate(ledger: Ledger, request: PostingRequest) -> Outcome:
    """Every check of a posting and the operations it would write; nothing is written."""
    ensure_ledger_active(ledger)
    lookups = PostingLookups(ledger)
    planned = lookups.plan(
        request.template_code,
        request.variables,
        request.inline,
        at=request.effective_at,
        terms=request.rate,
    )
    stand_ins = _conversion_stand_ins(ledger, lookups, planned[1])
    prepared = prepare(ledger, lookups, request, planned)
    tx = prepared.transaction
    steps = opening_steps(tx, prepared.legs)
    for asset in assets_of(tx, prepared.legs):
        check_instrument(ledger, asset)
    balances = {
        b.account_id: b
        for b in Balance.objects.filter(
            organization_id=ledger.organization_id, account_id__in=balances_of(steps)
        )
    }
    balances.update(stand_ins)
    now = stamp_posted(tx, timezone.now(), prepared.effective_at)
    operations = BalanceBook(balances, now=now).apply_all(tx, steps)
    return Outcome(200, transaction=attach_operations(tx, operations))


def _conversion_stand_ins(
    ledger: Ledger, lookups: PostingLookups, plan: PostingPlan
) -> dict[uuid.UUID, Balance]:
    """A conversion account the first conversion in or out of its asset will make
    (``contents.conversion_accounts_ensure``): a dry run, which makes nothing, runs on the
    empty account it will be."""
    if plan.conversion is None:
        return {}
    aliases = [leg.alias for leg in plan.legs if leg.alias.startswith(Account.CONVERSION_PREFIX)]
    lookups.preload_accounts(aliases)
    stand_ins = {}
    for leg in plan.legs:
        if leg.alias in aliases and lookups.accounts.get(leg.alias) is None:
            account = conversion_account(ledger, leg.asset)
            lookups.accounts[leg.alias] = account
            stand_ins[account.pk] = new_balance(account)
    return stand_ins
