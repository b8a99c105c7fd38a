"""What postings read: templates, accounts and parent transactions, each kind fetched at most
once per request (one query per kind for a single posting and for a whole batch), and the plan
a template and its variables make. Templates and parents are read before any lock; a posting's
accounts are read by the statement that locks their balances (``lock_accounts``), inside its
database transaction. On PostgreSQL a template read once is kept in the process and checked,
not read, by that same statement.

A template is compiled once per text (``templates_dsl.compile`` caches by text), so posting
never parses."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from operator import itemgetter
from typing import Any

from django.db import connection

from ledgerproject import kept
from ledgerproject.db import ArrayParam, bind_arrays, pg_array
from ledgerproject.errors import ErrorCode, LedgerError
from ledgerproject.kept import Kept
from ledgerproject.rows import Join, Select
from organizations import ledger_copies
from organizations.models import Account, Balance, Ledger
from templates_dsl.ast import Template
from templates_dsl.compile import compile_template
from templates_dsl.models import TransactionTemplate
from templates_dsl.planner import PostingPlan, plan_posting
from transactions.locking import EACH_BALANCE_LOCKED, lock_balances
from transactions.models import Transaction

# Literal statements (on both databases, ``rows.Select``): compiling an ORM query costs more
# Python than the posting's own work on that path.
TEMPLATES_SQL = Select(
    TransactionTemplate,
    "t",
    "FROM templates_dsl_transactiontemplate t "
    "WHERE t.organization_id = %s AND t.ledger_id = %s AND t.code = ANY(%s) "
    "AND t.deleted_at IS NULL "
    "ORDER BY t.created_at, t.id",
)
ACCOUNTS_FROM = (
    "FROM organizations_account a "
    "WHERE a.organization_id = %s AND a.ledger_id = %s AND a.alias = ANY(%s) "
    "ORDER BY a.created_at, a.id"
)
# What a posting reads of an account (``prepare`` and ``guards.check_account``): its other
# columns (three timestamps, a JSON document, names) cost a posting more to load than to send.
POSTING_ACCOUNT_FIELDS = (
    "id", "alias", "portfolio", "asset_code", "status_code", "allow_sending", "allow_receiving",
    "deleted_at",
)  # fmt: skip
ACCOUNTS_SQL = Select(Account, "a", ACCOUNTS_FROM, only=POSTING_ACCOUNT_FIELDS)
# How many of the cached templates the postings planned with are still as they were (same row,
# same updated_at, not deleted). Each id is compared with its own stamp by its position (the
# ids are distinct), which PostgreSQL plans much faster than a join with unnest(). The ids it
# reads by are an ``ArrayParam``, so for a posting's one or
# few templates the statement keeps its generic plan, as the accounts' list does.
# In parentheses: a statement of its own, and a value in the statement that locks the balances.
FRESH_TEMPLATES = (
    "(SELECT count(*) FROM templates_dsl_transactiontemplate t "
    "WHERE t.organization_id = %s AND t.id = ANY(%s) AND t.deleted_at IS NULL "
    "AND t.updated_at = (%s::timestamptz[])[array_position(%s::uuid[], t.id)])"
)
# The active accounts with these aliases and their balances, the balances locked in balance-id
# order (the order every lock on balances is taken in, ``transactions.locking``): a posting's one
# read of its accounts. Each alias is looked up on its own, by the whole of a unique key (the
# active alias), and so is its balance's id (by its account), in a subquery the planner may not
# merge into the rest (OFFSET 0): PostgreSQL costs an equality on the whole of a unique key at
# one row whatever it knows of the table, so the plan is the same with statistics and without
# them (a new ledger whose tables were never analyzed). A list of aliases matched at once is a
# choice the planner makes from statistics; without them it read every account of the ledger
# and every balance of the organization. The accounts are sorted by their balances' ids, and
# the balances locked one by one in that order (``locking.EACH_BALANCE_LOCKED``). Every part
# names the organization, so Citus routes the statement to one node. Parameters: the
# organization, the aliases, the organization, the ledger, the organization.
LOCK_ACCOUNTS_FROM = (
    "FROM (SELECT acc.*, (SELECT found.id FROM organizations_balance found "
    "WHERE found.organization_id = %s AND found.account_id = acc.id) AS balance_id "
    "FROM unnest(%s) AS wanted(alias) "
    "CROSS JOIN LATERAL (SELECT * FROM organizations_account named "
    "WHERE named.organization_id = %s AND named.ledger_id = %s "
    "AND named.alias = wanted.alias AND named.deleted_at IS NULL OFFSET 0) acc "
    f"ORDER BY balance_id) ordered {EACH_BALANCE_LOCKED}"
)
_ACCOUNT_PART = Select(Account, "ordered", "", only=POSTING_ACCOUNT_FIELDS)
# What a posting reads of a balance: the engine's book (``money.BalanceBook``) and the write
# need no more (the organization and ledger are the posting's, the asset the account's).
POSTING_BALANCE_FIELDS = (
    "id", "account", "is_external", "available", "on_hold", "scale", "overdraft_limit",
    "version", "updated_at",
)  # fmt: skip
_BALANCE_PART = Select(Balance, "b", "", only=POSTING_BALANCE_FIELDS)
# Its extra values, each when needed: whether the cached templates are unchanged, and what
# confirms a ledger kept by the process (``organizations.ledger_copies``).
LOCK_ACCOUNTS_SQL = {
    (templates, copy): Join(
        [_ACCOUNT_PART, _BALANCE_PART],
        LOCK_ACCOUNTS_FROM,
        extra=[
            *(ledger_copies.CONFIRM_COLUMNS if copy else ()),
            *([FRESH_TEMPLATES] * templates),
        ],
    )
    for templates in (False, True)
    for copy in (False, True)
}
# The templates and accounts postings read, as they read them (``POSTING_ACCOUNT_FIELDS``),
# kept for the next postings (``ledgerproject.kept`` says what confirms them): a template is
# checked by the statement that locks the balances; an account is read again by it.
kept_templates: Kept[tuple[uuid.UUID, str], TransactionTemplate] = Kept(4096)
kept_accounts: Kept[tuple[uuid.UUID, str], Account] = Kept(65536)


def _same_account(held: Account | None, read: Account | None) -> bool:
    """The same account row with the same values of everything a posting reads of it."""
    if held is None or read is None:
        return held is read
    return _read_values(held.__dict__) == _read_values(read.__dict__)


_read_values = itemgetter(*_ACCOUNT_PART.attnames)


class TemplatesChanged(Exception):
    """A cached template changed since it was read: plan again from the database."""


def template_missing(code: str) -> LedgerError:
    return LedgerError(
        ErrorCode.NOT_FOUND,
        f"No transaction template with code '{code}' in this ledger.",
        fields={"transactionTypeCode": "not found"},
    )


def parent_missing(parent_id: uuid.UUID) -> LedgerError:
    return LedgerError(
        ErrorCode.PARENT_TRANSACTION_NOT_FOUND,
        f"The parent transaction {parent_id} was not found in this ledger.",
        fields={"parentTransactionId": "not found"},
    )


class PostingLookups:
    """The templates, accounts and parents the postings of one request name, in one ledger."""

    def __init__(self, ledger: Ledger, *, cached: bool = True) -> None:
        self.ledger = ledger
        self.organization_id = ledger.organization_id
        # On PostgreSQL a template row is kept in this process and used without being read
        # again; the accounts' statement then checks it is unchanged (``TemplatesChanged``).
        self.cached = cached and kept.in_use()
        self.unverified: dict[uuid.UUID, Any] = {}
        self.templates: dict[str, TransactionTemplate | None] = {}
        self.accounts: dict[str, Account | None] = {}
        self.parents: dict[uuid.UUID, bool] = {}

    def preload_templates(self, codes: Iterable[str]) -> None:
        wanted = set(codes) - set(self.templates)
        if not wanted:
            return
        self.templates.update(dict.fromkeys(wanted))
        if self.cached:
            for code in list(wanted):
                template = kept_templates.get((self.ledger.pk, code))
                if template is not None:
                    self.templates[code] = template
                    self.unverified[template.pk] = template.updated_at
                    wanted.discard(code)
            if not wanted:
                return
        named = ArrayParam(sorted(wanted), "varchar")
        for template in TEMPLATES_SQL.fetch([self.organization_id, self.ledger.pk, named]):
            self.templates[template.code] = template
            if self.cached:
                kept_templates.put((self.ledger.pk, template.code), template)

    def plan(
        self, code: str, variables: Mapping[str, Any], inline: Template | None = None
    ) -> tuple[TransactionTemplate | None, PostingPlan]:
        """The template with this code and what it posts with these variables; an ``inline``
        template (checked, from the request) stands in for a stored one."""
        if inline is not None:
            return None, plan_posting(inline, variables)
        self.preload_templates([code])
        template = self.templates[code]
        if template is None:
            raise template_missing(code)
        return template, plan_posting(compile_template(template.text), variables)

    def preload_accounts(self, aliases: Iterable[str]) -> None:
        """Read the accounts with these aliases that are not held yet, with no lock (a dry run;
        a posting reads them with ``lock_accounts``). Of the accounts with one alias (deleted
        ones keep theirs), the active one wins."""
        wanted = set(aliases) - set(self.accounts)
        if not wanted:
            return
        self.accounts.update(dict.fromkeys(wanted))
        named = ArrayParam(sorted(wanted), "varchar")
        self._keep(ACCOUNTS_SQL.fetch([self.organization_id, self.ledger.pk, named]))

    def cached_accounts(self, aliases: Iterable[str]) -> bool:
        """Take the accounts with these aliases from this process's copies, when it holds every
        one of them (PostgreSQL, a posting that may use copies): a posting is then checked and
        prepared before its locks, and the statement that locks the balances confirms the copies
        (``lock_accounts``). False, and nothing taken, when one is missing."""
        if not self.cached:
            return False
        wanted = set(aliases)
        found = {alias: kept_accounts.get((self.ledger.pk, alias)) for alias in wanted}
        if any(account is None for account in found.values()):
            return False
        self.accounts.update(found)
        return True

    def lock_accounts(
        self, locked: Iterable[str], read: Iterable[str] = ()
    ) -> tuple[dict[uuid.UUID, Balance], bool]:
        """Inside the posting's database transaction: read the accounts with the aliases
        ``locked`` and lock their balances; read those with the aliases only in ``read`` too
        (no lock: an account whose balance the postings leave alone). Of several accounts with
        one alias the active one wins. Answers the locked balances by account id, and whether
        the accounts read are the ones already held (``cached_accounts``): if not, they replace
        them. On PostgreSQL the locked ones are one statement, which also checks the cached
        templates (``TemplatesChanged``); elsewhere the accounts, then ``lock_balances``."""
        to_lock = set(locked)
        wanted = to_lock | set(read)
        held = {alias: self.accounts.get(alias) for alias in wanted}
        for alias in wanted:
            self.accounts.pop(alias, None)
        balances: dict[uuid.UUID, Balance] = {}
        locked_accounts: list[Account] = []
        if to_lock and connection.vendor == "postgresql":
            named = ArrayParam(sorted(to_lock), "varchar")
            copy = ledger_copies.check_of(self.ledger) is not None
            templates = bool(self.unverified)
            params = [
                *(ledger_copies.confirm_params(self.ledger) if copy else ()),
                *(self._fresh_params() if templates else ()),
                self.organization_id,
                named,
                self.organization_id,
                self.ledger.pk,
                self.organization_id,
            ]
            rows = LOCK_ACCOUNTS_SQL[templates, copy].fetch(params)
            extra = rows[0][2] if rows else None
            if copy and extra is not None:  # (with no row, the engine confirms before writing)
                ledger_copies.confirm(self.ledger, *extra[:2])
            if templates:
                self._verify(extra[-1] if extra is not None else None)
            # A deleted account is not locked: read with the others below, it is refused.
            locked_accounts = [account for account, _, _ in rows]
            self.accounts.update({account.alias: account for account in locked_accounts})
            balances = {balance.account_id: balance for _, balance, _ in rows}
        elif to_lock:  # SQLite serializes writers: the accounts, then their balances
            self.preload_accounts(to_lock)
            locked_accounts = [a for alias in to_lock if (a := self.accounts[alias]) is not None]
            balances = lock_balances(self.organization_id, [a.pk for a in locked_accounts])
        self.verify_templates()
        self.preload_accounts(wanted)
        for alias in to_lock - {account.alias for account in locked_accounts}:
            account = self.accounts[alias]
            if account is not None and account.deleted_at is None:
                # Created since the locking statement read: its balance is not locked, and the
                # posting refuses it as the statement found it, absent.
                self.accounts[alias] = None
        same = all(_same_account(held[alias], self.accounts[alias]) for alias in wanted)
        if self.cached:
            self._remember(wanted)
        return balances, same

    def _remember(self, aliases: Iterable[str]) -> None:
        """Keep the accounts read (an alias with no account is forgotten)."""
        for alias in aliases:
            account = self.accounts[alias]
            if account is None:
                kept_accounts.forget((self.ledger.pk, alias))
            else:
                kept_accounts.put((self.ledger.pk, alias), account)

    def verify_templates(self) -> None:
        """Check the cached templates used so far (``TemplatesChanged``), when nothing else
        read would check them."""
        if self.unverified:
            self._verify(None)

    def _keep(self, rows: Iterable[Account]) -> None:
        """Of the accounts with one alias (deleted ones keep theirs), the active one wins."""
        for account in rows:
            current = self.accounts[account.alias]
            if current is None or (current.deleted_at is not None and account.deleted_at is None):
                self.accounts[account.alias] = account

    def _fresh_params(self) -> list[Any]:
        ids = list(self.unverified)
        stamps = pg_array(self.unverified.values())
        return [self.organization_id, ArrayParam(ids, "uuid"), stamps, pg_array(ids)]

    def _verify(self, fresh: int | None) -> None:
        """Every cached template used is unchanged, or ``TemplatesChanged`` (their entries are
        dropped, so the next plan reads them from the database)."""
        if fresh is None:
            with connection.cursor() as cursor:
                cursor.execute(*bind_arrays(FRESH_TEMPLATES, self._fresh_params()))
                fresh = cursor.fetchone()[0]
        if fresh != len(self.unverified):
            kept_templates.forget_values(lambda template: template.pk in self.unverified)
            raise TemplatesChanged
        self.unverified.clear()

    def resolve_accounts(self, aliases: Iterable[str]) -> dict[str, Account]:
        wanted = set(aliases)
        self.preload_accounts(wanted)
        found = {alias: account for alias in wanted if (account := self.accounts[alias])}
        missing = sorted(wanted - set(found))
        if missing:
            raise LedgerError(
                ErrorCode.ACCOUNT_ALIAS_NOT_FOUND,
                f"No account with alias {', '.join(missing)} in this ledger.",
                fields={alias: "not found" for alias in missing},
            )
        return found

    def preload_parents(self, ids: Iterable[uuid.UUID]) -> None:
        wanted = set(ids) - set(self.parents)
        if not wanted:
            return
        found = set(
            Transaction.objects.filter(
                organization_id=self.organization_id, pk__in=wanted, ledger_id=self.ledger.pk
            ).values_list("pk", flat=True)
        )
        self.parents.update({pk: pk in found for pk in wanted})

    def check_parent(self, parent_id: uuid.UUID | None) -> None:
        if parent_id is None:
            return
        self.preload_parents([parent_id])
        if not self.parents[parent_id]:
            raise parent_missing(parent_id)
