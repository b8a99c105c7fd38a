"""A dry run: every check of a posting and the operations it would write, with nothing written
and no lock taken (``engine.post(..., dry_run=True)``)."""

from __future__ import annotations

from django.utils import timezone

from organizations.models import Balance, Ledger
from organizations.services import ensure_ledger_active
from transactions.guards import check_instrument
from transactions.lookups import PostingLookups
from transactions.money import BalanceBook
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
    planned = lookups.plan(request.template_code, request.variables, request.inline)
    prepared = prepare(ledger, lookups, request, planned)
    tx = prepared.transaction
    steps = opening_steps(tx, prepared.legs)
    check_instrument(ledger, tx.asset_code)
    balances = {
        b.account_id: b
        for b in Balance.objects.filter(
            organization_id=ledger.organization_id, account_id__in=balances_of(steps)
        )
    }
    now = stamp_posted(tx, timezone.now(), prepared.effective_at)
    operations = BalanceBook(balances, now=now).apply_all(tx, steps)
    return Outcome(200, transaction=attach_operations(tx, operations))
