"""Holds that expire: one pass of the worker that cancels pending transactions past their
expiry, each through ``states.expire`` (the same cancel as a request's).

Safe in several copies: ``expire`` locks the transaction's row (waiting, at most, for the one
commit or cancel of that row in progress) and acts only on a transaction still pending and past
its expiry, so a row another worker (or a commit) got to first is left alone, and a hold that a
commit was refused for, as expired, is canceled by the same pass."""

from __future__ import annotations

import datetime as dt
import logging

from django.utils import timezone

from ledgerproject.errors import LedgerError
from organizations.models import Ledger
from transactions import states
from transactions.models import Transaction

log = logging.getLogger(__name__)


def expire_due(*, limit: int = 100, now: dt.datetime | None = None) -> int:
    """Cancel up to ``limit`` transactions whose holds expired; answer how many this call did."""
    now = now or timezone.now()
    due = list(
        Transaction.objects.filter(
            status=Transaction.PRE_APPROVED,
            expires_at__isnull=False,
            expires_at__lte=now,
            ledger__deleted_at__isnull=True,
        )
        .order_by("expires_at", "id")
        .values_list("id", "ledger_id")[:limit]
    )
    ledgers = Ledger.objects.in_bulk({ledger_id for _, ledger_id in due})
    done = 0
    for tx_id, ledger_id in due:
        try:
            if states.expire(ledger=ledgers[ledger_id], transaction_id=tx_id, now=now):
                done += 1
        except LedgerError as error:  # e.g. its ledger or instrument was deleted meanwhile
            log.warning("transaction %s was not expired: %s", tx_id, error.description)
    return done
