"""What postings read: templates, accounts and parent transactions, each kind fetched at most
once per request (one query per kind for a single posting and for a whole batch), and the plan
a template and its variables make. Templates and parents are read before any lock; a posting's
accounts are read by the statement that locks their balances (``lock_accounts``), inside its
database transaction. Where the process keeps copies, ``transactions.copies.KeptLookups`` wraps
these lookups: it answers templates and accounts from its copies and confirms them in the same
statements.

A template is compiled once per text (``templates_dsl.compile`` caches by text), so posting
never parses."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterable, Mapping
from operator import itemgetter
from typing import Any

from django.db import transaction
from django.utils import timezone

from instruments.conversion import ChosenRate, RateTerms, choose_rate
from ledgerproject.db import ArrayParam, by_database
from ledgerproject.errors import ErrorCode, LedgerError
from ledgerproject.rows import Join, Select
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
    "id", "alias", "type", "portfolio", "asset_code", "status_code", "allow_sending",
    "allow_receiving", "deleted_at",
)  # fmt: skip
ACCOUNTS_SQL = Select(Account, "a", ACCOUNTS_FROM, only=POSTING_ACCOUNT_FIELDS)
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
ACCOUNT_PART = Select(Account, "ordered", "", only=POSTING_ACCOUNT_FIELDS)
# What a posting reads of a balance: the engine's book (``money.BalanceBook``) and the write
# need no more (the organization and ledger are the posting's, the asset the account's).
POSTING_BALANCE_FIELDS = (
    "id", "account", "is_external", "available", "on_hold", "scale", "overdraft_limit",
    "version", "updated_at", "monitored",
)  # fmt: skip
BALANCE_PART = Select(Balance, "b", "", only=POSTING_BALANCE_FIELDS)
# The statement that locks a posting's accounts and balances. ``copies.KeptLookups`` adds the
# values that confirm the copies it ran on.
LOCK_ACCOUNTS_SQL = Join([ACCOUNT_PART, BALANCE_PART], LOCK_ACCOUNTS_FROM)


def _same_account(held: Account | None, read: Account | None) -> bool:
    """The same account row with the same values of everything a posting reads of it."""
    if held is None or read is None:
        return held is read
    return _read_values(held.__dict__) == _read_values(read.__dict__)


_read_values = itemgetter(*ACCOUNT_PART.attnames)


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

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self.organization_id = ledger.organization_id
        self.templates: dict[str, TransactionTemplate | None] = {}
        self.accounts: dict[str, Account | None] = {}
        self.parents: dict[uuid.UUID, bool] = {}

    def preload_templates(self, codes: Iterable[str]) -> None:
        wanted = set(codes) - set(self.templates)
        if not wanted:
            return
        self.templates.update(dict.fromkeys(wanted))
        self.read_templates(wanted)

    def read_templates(self, codes: set[str]) -> None:
        """Read the templates with these codes (no template: the code stays None)."""
        named = ArrayParam(sorted(codes), "varchar")
        for template in TEMPLATES_SQL.fetch([self.organization_id, self.ledger.pk, named]):
            self.templates[template.code] = template

    def plan(
        self,
        code: str,
        variables: Mapping[str, Any],
        inline: Template | None = None,
        *,
        at: dt.datetime | None = None,
        terms: RateTerms | None = None,
    ) -> tuple[TransactionTemplate | None, PostingPlan]:
        """The template with this code and what it posts with these variables; an ``inline``
        template (checked, from the request) stands in for a stored one. A template that
        converts is planned at the rate in force at ``at`` (by default now) that ``terms``
        accept (``instruments.conversion.choose_rate``)."""
        if inline is not None:
            return None, plan_posting(inline, variables, self._rate(inline, at, terms))
        self.preload_templates([code])
        template = self.templates[code]
        if template is None:
            raise template_missing(code)
        tree = compile_template(template.text)
        return template, plan_posting(tree, variables, self._rate(tree, at, terms))

    def _rate(
        self, tree: Template, at: dt.datetime | None, terms: RateTerms | None
    ) -> ChosenRate | None:
        convert = tree.convert
        if convert is None:
            if terms is not None:
                raise LedgerError(
                    ErrorCode.BAD_REQUEST,
                    "rate is only for a template that converts between assets (convert ...).",
                    fields={"rate": "the template does not convert"},
                )
            return None
        # In a database transaction: on a connection kept from an earlier request, a first
        # statement that fails there is made again on a new one (``health``).
        with transaction.atomic():
            return choose_rate(
                self.ledger,
                tree.send.asset,
                convert.asset,
                at or timezone.now(),
                source=convert.rate_source,
                terms=terms,
            )

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

    def accounts_from_copies(self, aliases: Iterable[str]) -> bool:
        """Whether the accounts with these aliases were taken from the process's copies, to
        check and prepare a posting before its locks: no copies here (``KeptLookups``)."""
        return False

    def lock_accounts(
        self, locked: Iterable[str], read: Iterable[str] = ()
    ) -> tuple[dict[uuid.UUID, Balance], bool]:
        """Inside the posting's database transaction: read the accounts with the aliases
        ``locked`` and lock their balances; read those with the aliases only in ``read`` too
        (no lock: an account whose balance the postings leave alone). Of several accounts with
        one alias the active one wins. Answers the locked balances by account id, and whether
        the accounts read are the ones already held (``accounts_from_copies``): if not, they
        replace them. On PostgreSQL the locked ones are one statement (which also confirms the
        copies a ``KeptLookups`` ran on); on SQLite the accounts, then ``lock_balances``."""
        to_lock = set(locked)
        wanted = to_lock | set(read)
        held = {alias: self.accounts.get(alias) for alias in wanted}
        for alias in wanted:
            self.accounts.pop(alias, None)
        balances: dict[uuid.UUID, Balance] = {}
        locked_accounts: list[Account] = []
        if to_lock:
            locked_accounts, balances = self._lock(to_lock)
        self.verify_templates()
        self.preload_accounts(wanted)
        for alias in to_lock - {account.alias for account in locked_accounts}:
            account = self.accounts[alias]
            if account is not None and account.deleted_at is None:
                # Created since the locking statement read: its balance is not locked, and the
                # posting refuses it as the statement found it, absent.
                self.accounts[alias] = None
        same = all(_same_account(held[alias], self.accounts[alias]) for alias in wanted)
        return balances, same

    def _lock_postgresql(self, to_lock: set[str]) -> tuple[list[Account], dict[uuid.UUID, Balance]]:
        """One statement: the active accounts with these aliases and their balances locked
        (``LOCK_ACCOUNTS_FROM``)."""
        named = ArrayParam(sorted(to_lock), "varchar")
        statement, params = self.locking_statement()
        org = self.organization_id
        rows = statement.fetch([*params, org, named, org, self.ledger.pk, org])
        self.confirm_copies(rows[0][2] if rows else None)
        # A deleted account is not locked: read with the others after, it is refused.
        locked_accounts = [account for account, _, _ in rows]
        self.accounts.update({account.alias: account for account in locked_accounts})
        return locked_accounts, {balance.account_id: balance for _, balance, _ in rows}

    def locking_statement(self) -> tuple[Join, list[Any]]:
        """The statement that locks the accounts' balances, and its parameters before the
        accounts': ``KeptLookups`` adds the values that confirm its copies."""
        return LOCK_ACCOUNTS_SQL, []

    def confirm_copies(self, extra: tuple[Any, ...] | None) -> None:
        """What the locking statement read besides the rows (``None`` with no row)."""

    def _lock_sqlite(self, to_lock: set[str]) -> tuple[list[Account], dict[uuid.UUID, Balance]]:
        """SQLite serializes writers: the accounts, then their balances."""
        self.preload_accounts(to_lock)
        locked_accounts = [a for alias in to_lock if (a := self.accounts[alias]) is not None]
        return locked_accounts, lock_balances(self.organization_id, [a.pk for a in locked_accounts])

    _lock = by_database(postgresql=_lock_postgresql, sqlite=_lock_sqlite)

    def verify_templates(self) -> None:
        """Before an answer made without the locking statement (a refusal): confirm the kept
        templates it was planned with. None here (``KeptLookups``)."""

    def confirm_before_write(self) -> None:
        """Before the write: confirm the kept ledger the posting ran on, if no statement has.
        None here (``KeptLookups``)."""

    def _keep(self, rows: Iterable[Account]) -> None:
        """Of the accounts with one alias (deleted ones keep theirs), the active one wins."""
        for account in rows:
            current = self.accounts[account.alias]
            if current is None or (current.deleted_at is not None and account.deleted_at is None):
                self.accounts[account.alias] = account

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
