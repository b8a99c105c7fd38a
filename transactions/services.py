"""The posting engine: the one way money moves.

``transaction_post`` plans a posting from a template and variables (pure, no locks), checks the
accounts, then in one durable database transaction locks the balances involved in primary-key
order, applies every leg exactly (integers with a scale, never rounded), and writes the
transaction, its append-only operations and the new balances. Commit, revert and cancel lock the
transaction row first, so that of two racing requests exactly one wins.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from instruments.models import Instrument
from ledgerproject.amounts import in_range
from ledgerproject.api.errors import ApiError, ErrorCode
from organizations.locking import lock_ledger_active
from organizations.models import Account, Ledger
from organizations.services import ensure_ledger_active
from templates_dsl.compile import compile_template
from templates_dsl.models import TransactionTemplate
from templates_dsl.planner import PostingPlan, plan_posting
from transactions.locking import lock_balances, lock_transaction, try_lock_key
from transactions.models import Balance, IdempotencyKey, Operation, Transaction
from transactions.money import rescale

BLOCKED_STATUSES = frozenset({"BLOCKED", "002", "INACTIVE"})
DEBIT, CREDIT = Operation.DEBIT, Operation.CREDIT


@dataclass(frozen=True)
class IdempotencyClaim:
    """A key to claim inside the posting's database transaction, and how to store the answer."""

    key: str
    request_hash: str
    ttl_seconds: int
    render: Callable[[Any], Any]  # the transaction (or a batch's outcomes) -> the stored body
    status_code: int = 201


class IdempotentReplay(Exception):
    def __init__(self, record: IdempotencyKey) -> None:
        self.record = record
        super().__init__(record.key)


@dataclass(frozen=True)
class ResolvedLeg:
    account_id: uuid.UUID
    alias: str
    portfolio_id: uuid.UUID | None
    direction: str
    amount: int
    description: str
    chart_of_accounts: str

    def as_json(self) -> dict[str, Any]:
        return {
            "accountId": str(self.account_id),
            "alias": self.alias,
            "portfolioId": str(self.portfolio_id) if self.portfolio_id else None,
            "direction": self.direction,
            "amount": self.amount,
            "description": self.description,
            "chartOfAccounts": self.chart_of_accounts,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ResolvedLeg:
        return cls(
            account_id=uuid.UUID(data["accountId"]),
            alias=data["alias"],
            portfolio_id=uuid.UUID(data["portfolioId"]) if data.get("portfolioId") else None,
            direction=data["direction"],
            amount=int(data["amount"]),
            description=data.get("description", ""),
            chart_of_accounts=data.get("chartOfAccounts", ""),
        )

    def mirrored(self) -> ResolvedLeg:
        flipped = CREDIT if self.direction == DEBIT else DEBIT
        return ResolvedLeg(**{**self.__dict__, "direction": flipped})


@dataclass
class PreparedPosting:
    ledger: Ledger
    template: TransactionTemplate
    plan: PostingPlan
    legs: list[ResolvedLeg]
    pending: bool
    description: str | None
    metadata: dict[str, Any]
    parent_id: uuid.UUID | None
    source: list[str] = field(default_factory=list)
    destination: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# Exact balance arithmetic


def _check_range(value: int, alias: str) -> int:
    if not in_range(value):
        raise ApiError(
            ErrorCode.ACTION_NOT_PERMITTED,
            f"The balance of {alias} would exceed the largest amount the ledger can hold.",
        )
    return value


class BalanceBook:
    """Balances of one posting in memory; each applied leg yields one operation."""

    def __init__(self, balances: Mapping[uuid.UUID, Balance], *, now: dt.datetime) -> None:
        self.balances = balances
        self.now = now

    def apply(
        self,
        tx: Transaction,
        leg: ResolvedLeg,
        *,
        effect: str,
        direction: str | None = None,
    ) -> Operation:
        balance = self.balances[leg.account_id]
        direction = direction or leg.direction
        before = (balance.available, balance.on_hold, balance.scale)
        scale = max(balance.scale, tx.scale)
        available = rescale(balance.available, balance.scale, scale)
        on_hold = rescale(balance.on_hold, balance.scale, scale)
        amount = rescale(leg.amount, tx.scale, scale)
        if effect == Operation.POST:
            available += -amount if direction == DEBIT else amount
        elif effect == Operation.HOLD:
            available, on_hold = available - amount, on_hold + amount
        elif effect == Operation.SETTLE:
            on_hold -= amount
        elif effect == Operation.RELEASE:
            available, on_hold = available + amount, on_hold - amount
        if available < 0 and not balance.is_external:
            raise ApiError(
                ErrorCode.INSUFFICIENT_FUNDS,
                f"Insufficient funds in {leg.alias}: available {balance.available} "
                f"(scale {balance.scale}) is less than {leg.amount} (scale {tx.scale}).",
            )
        if on_hold < 0:
            raise ApiError(
                ErrorCode.ACTION_NOT_PERMITTED, f"The amount on hold in {leg.alias} is too small."
            )
        balance.available = _check_range(available, leg.alias)
        balance.on_hold = _check_range(on_hold, leg.alias)
        balance.scale = scale
        balance.version += 1
        balance.updated_at = self.now
        return Operation(
            organization_id=tx.organization_id,
            ledger_id=tx.ledger_id,
            transaction=tx,
            account_id=leg.account_id,
            account_alias=leg.alias,
            portfolio_id=leg.portfolio_id,
            type=direction,
            effect=effect,
            asset_code=tx.asset_code,
            chart_of_accounts=leg.chart_of_accounts,
            description=leg.description,
            amount=leg.amount,
            scale=tx.scale,
            balance_available=before[0],
            balance_on_hold=before[1],
            balance_scale=before[2],
            balance_available_after=balance.available,
            balance_on_hold_after=balance.on_hold,
            balance_scale_after=balance.scale,
            balance_version=balance.version,
            created_at=self.now,
            updated_at=self.now,
        )


# ---------------------------------------------------------------------------------------------
# Preparation: everything that needs no lock


def _template_missing(code: str) -> ApiError:
    return ApiError(
        ErrorCode.NOT_FOUND,
        f"No transaction template with code '{code}' in this ledger.",
        fields={"transactionTypeCode": "not found"},
    )


def _parent_missing(parent_id: uuid.UUID) -> ApiError:
    return ApiError(
        ErrorCode.PARENT_TRANSACTION_NOT_FOUND,
        f"The parent transaction {parent_id} was not found in this ledger.",
        fields={"parentTransactionId": "not found"},
    )


# The hot path's reads and writes as literal statements on PostgreSQL: the ORM's query
# compilation was a third of a posting's time (docs/PERFORMANCE.md). Elsewhere the ORM.
TEMPLATES_SQL = (
    "SELECT * FROM templates_dsl_transactiontemplate "
    "WHERE ledger_id = %s AND code = ANY(%s) AND deleted_at IS NULL ORDER BY created_at, id"
)
ACCOUNTS_SQL = (
    "SELECT * FROM organizations_account WHERE ledger_id = %s AND alias = ANY(%s) "
    "ORDER BY created_at, id"
)
INSTRUMENT_SQL = (
    "SELECT 1 FROM instruments_instrument WHERE ledger_id = %s AND code = %s "
    "AND deleted_at IS NULL AND EXISTS (SELECT 1 FROM organizations_ledger "
    "WHERE id = %s AND deleted_at IS NULL FOR KEY SHARE) LIMIT 1"
)
TRANSACTION_COLUMNS = (
    "id", "created_at", "updated_at", "organization_id", "ledger_id", "parent_id", "is_reversal",
    "template_id", "type", "description", "status", "amount", "scale", "asset_code",
    "chart_of_accounts_group_name", "source", "destination", "metadata", "legs",
)  # fmt: skip
OPERATION_COLUMNS = (
    "id", "created_at", "updated_at", "organization_id", "ledger_id", "transaction_id",
    "account_id", "account_alias", "portfolio_id", "type", "effect", "asset_code",
    "chart_of_accounts", "description", "amount", "scale", "balance_available",
    "balance_on_hold", "balance_scale", "balance_available_after", "balance_on_hold_after",
    "balance_scale_after", "balance_version", "metadata",
)  # fmt: skip


def _column_values(obj: Any, columns: tuple[str, ...]) -> list[Any]:
    """What ``Model.save`` would send for ``obj``: each field's ``pre_save`` (``auto_now``
    stamps ``updated_at``) then its database value."""
    by_column = {f.column: f for f in type(obj)._meta.concrete_fields}
    return [
        by_column[c].get_db_prep_save(by_column[c].pre_save(obj, True), connection) for c in columns
    ]


def _column_arrays(rows: list[Any], columns: tuple[str, ...]) -> list[list[Any]]:
    """The rows as one array per column, for ``INSERT ... SELECT * FROM unnest(...)``."""
    values = [_column_values(row, columns) for row in rows]
    for row in rows:
        row._state.adding = False
    return [[row[i] for row in values] for i in range(len(columns))]


WRITE_POSTING = """
WITH instrument AS (
  SELECT %s::boolean OR (EXISTS (SELECT 1 FROM instruments_instrument
    WHERE ledger_id = %s AND code = %s AND deleted_at IS NULL)
    AND NOT EXISTS (SELECT 1 FROM organizations_account
    WHERE id = ANY(%s::uuid[]) AND deleted_at IS NOT NULL)
    AND EXISTS (SELECT 1 FROM organizations_ledger
    WHERE id = %s AND deleted_at IS NULL FOR KEY SHARE)) AS ok
), new_transactions AS (
INSERT INTO transactions_transaction (id, created_at, updated_at, organization_id, ledger_id,
  parent_id, is_reversal, template_id, type, description, status, amount, scale, asset_code,
  chart_of_accounts_group_name, source, destination, metadata, legs)
SELECT * FROM unnest(%s::uuid[], %s::timestamptz[], %s::timestamptz[], %s::uuid[], %s::uuid[],
  %s::uuid[], %s::boolean[], %s::uuid[], %s::varchar[], %s::text[], %s::varchar[],
  %s::numeric[], %s::smallint[], %s::varchar[], %s::varchar[], %s::jsonb[], %s::jsonb[],
  %s::jsonb[], %s::jsonb[])
WHERE (SELECT ok FROM instrument)
), new_operations AS (
INSERT INTO transactions_operation (id, created_at, updated_at, organization_id, ledger_id,
  transaction_id, account_id, account_alias, portfolio_id, type, effect, asset_code,
  chart_of_accounts, description, amount, scale, balance_available, balance_on_hold,
  balance_scale, balance_available_after, balance_on_hold_after, balance_scale_after,
  balance_version, metadata)
SELECT * FROM unnest(%s::uuid[], %s::timestamptz[], %s::timestamptz[], %s::uuid[], %s::uuid[],
  %s::uuid[], %s::uuid[], %s::varchar[], %s::uuid[], %s::varchar[], %s::varchar[],
  %s::varchar[], %s::varchar[], %s::text[], %s::numeric[], %s::smallint[], %s::numeric[],
  %s::numeric[], %s::smallint[], %s::numeric[], %s::numeric[], %s::smallint[], %s::bigint[],
  %s::jsonb[])
WHERE (SELECT ok FROM instrument)
)
UPDATE transactions_balance AS b
SET available = v.available, on_hold = v.on_hold, scale = v.scale, version = v.version,
    updated_at = v.updated_at
FROM unnest(%s::uuid[], %s::numeric[], %s::numeric[], %s::smallint[], %s::bigint[],
            %s::timestamptz[]) AS v(id, available, on_hold, scale, version, updated_at)
WHERE b.id = v.id AND (SELECT ok FROM instrument)
"""


def write_posting(
    transactions: list[Transaction],
    operations: list[Operation],
    balances: list[Balance],
    *,
    guard: Guard | None = None,
) -> None:
    """Write new transactions, their operations and the new balances, provided that the
    ``guard``, when given, still holds (``check_guard``): its instrument is active and none of
    its accounts was deleted.

    On PostgreSQL all of it is one statement (the foreign keys are checked at its end, and the
    guard is read with a snapshot taken after the balance locks), so that the locks are
    held for three round trips only: lock, write, commit."""
    if connection.vendor != "postgresql":
        if guard is not None:
            check_guard(guard)
        Transaction.objects.bulk_create(transactions)
        Operation.objects.bulk_create(operations)
        update_balances(balances)
        return
    with connection.cursor() as cursor:
        cursor.execute(
            WRITE_POSTING,
            [
                guard is None,
                *(
                    (guard.ledger_id, guard.asset, list(guard.account_ids), guard.ledger_id)
                    if guard
                    else (None,) * 4
                ),
                *_column_arrays(transactions, TRANSACTION_COLUMNS),
                *_column_arrays(operations, OPERATION_COLUMNS),
                *_balance_arrays(balances),
            ],
        )
        written = cursor.rowcount
    if guard is not None and written == 0:
        check_guard(guard)
        raise instrument_missing(guard.asset)


class PostingLookups:
    """The templates, accounts and parent transactions postings of one ledger name, each
    fetched at most once: one query per kind for a single posting, and for a whole batch."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self.templates: dict[str, TransactionTemplate | None] = {}
        self.accounts: dict[str, Account | None] = {}
        self.parents: dict[uuid.UUID, bool] = {}

    def preload_templates(self, codes: Iterable[str]) -> None:
        wanted = set(codes) - set(self.templates)
        if not wanted:
            return
        self.templates.update(dict.fromkeys(wanted))
        if connection.vendor == "postgresql":
            rows: Iterable[TransactionTemplate] = TransactionTemplate.objects.raw(
                TEMPLATES_SQL, [self.ledger.pk, sorted(wanted)]
            )
        else:
            rows = TransactionTemplate.objects.filter(
                ledger_id=self.ledger.pk, code__in=wanted, deleted_at__isnull=True
            )
        for template in rows:
            self.templates[template.code] = template

    def template(self, code: str) -> TransactionTemplate:
        self.preload_templates([code])
        template = self.templates[code]
        if template is None:
            raise _template_missing(code)
        return template

    def preload_accounts(self, aliases: Iterable[str]) -> None:
        """Of the accounts with one alias (deleted ones keep theirs), the active one wins."""
        wanted = set(aliases) - set(self.accounts)
        if not wanted:
            return
        self.accounts.update(dict.fromkeys(wanted))
        if connection.vendor == "postgresql":
            rows: Iterable[Account] = Account.objects.raw(
                ACCOUNTS_SQL, [self.ledger.pk, sorted(wanted)]
            )
        else:
            rows = Account.objects.filter(ledger_id=self.ledger.pk, alias__in=wanted)
        for account in rows:
            current = self.accounts[account.alias]
            if current is None or (current.deleted_at is not None and account.deleted_at is None):
                self.accounts[account.alias] = account

    def resolve_accounts(self, aliases: Iterable[str]) -> dict[str, Account]:
        wanted = set(aliases)
        self.preload_accounts(wanted)
        found = {alias: self.accounts[alias] for alias in wanted if self.accounts[alias]}
        missing = sorted(wanted - set(found))
        if missing:
            raise ApiError(
                ErrorCode.ACCOUNT_ALIAS_NOT_FOUND,
                f"No account with alias {', '.join(missing)} in this ledger.",
                fields={alias: "not found" for alias in missing},
            )
        return found  # type: ignore[return-value]

    def preload_parents(self, ids: Iterable[uuid.UUID]) -> None:
        wanted = set(ids) - set(self.parents)
        if not wanted:
            return
        found = set(
            Transaction.objects.filter(pk__in=wanted, ledger_id=self.ledger.pk).values_list(
                "pk", flat=True
            )
        )
        self.parents.update({pk: pk in found for pk in wanted})

    def check_parent(self, parent_id: uuid.UUID | None) -> None:
        if parent_id is None:
            return
        self.preload_parents([parent_id])
        if not self.parents[parent_id]:
            raise _parent_missing(parent_id)


def _check_account(account: Account, direction: str, asset: str) -> None:
    if account.asset_code != asset:
        raise ApiError(
            ErrorCode.MISMATCHED_ASSET_CODE,
            f"Account {account.alias} holds {account.asset_code}, not {asset}.",
        )
    if account.deleted_at is not None or account.status_code in BLOCKED_STATUSES:
        if account.deleted_at is not None:
            check_instrument(account.ledger_id, asset)
        raise ApiError(
            ErrorCode.ACCOUNT_STATUS_RESTRICTION,
            f"Account {account.alias} is deleted or blocked.",
        )
    if direction == DEBIT and not account.allow_sending:
        raise ApiError(
            ErrorCode.ACCOUNT_STATUS_RESTRICTION, f"Account {account.alias} may not send."
        )
    if direction == CREDIT and not account.allow_receiving:
        raise ApiError(
            ErrorCode.ACCOUNT_STATUS_RESTRICTION, f"Account {account.alias} may not receive."
        )


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def posting_plan(
    lookups: PostingLookups, template_code: str, variables: Mapping[str, Any]
) -> tuple[TransactionTemplate, PostingPlan]:
    template = lookups.template(template_code)
    return template, plan_posting(compile_template(template.text), variables)


def transaction_prepare(
    *,
    ledger: Ledger,
    template_code: str,
    variables: Mapping[str, Any],
    metadata: Mapping[str, Any] | None = None,
    description: str | None = None,
    pending: bool | None = None,
    parent_id: uuid.UUID | None = None,
    lookups: PostingLookups | None = None,
    planned: tuple[TransactionTemplate, PostingPlan] | None = None,
) -> PreparedPosting:
    """Everything that needs no lock: the template, the plan, the parent and the accounts.
    A batch passes its shared ``lookups`` and the ``planned`` template and plan it already has."""
    ensure_ledger_active(ledger)
    lookups = lookups or PostingLookups(ledger)
    template, plan = planned or posting_plan(lookups, template_code, variables)
    lookups.check_parent(parent_id)
    accounts = lookups.resolve_accounts(leg.alias for leg in plan.legs)
    legs = []
    for leg in plan.legs:
        account = accounts[leg.alias]
        _check_account(account, leg.direction, plan.asset)
        legs.append(
            ResolvedLeg(
                account_id=account.pk,
                alias=account.alias,
                portfolio_id=account.portfolio_id,
                direction=leg.direction,
                amount=leg.amount,
                description=leg.description,
                chart_of_accounts=leg.chart_of_accounts,
            )
        )
    return PreparedPosting(
        ledger=ledger,
        template=template,
        plan=plan,
        legs=legs,
        pending=plan.pending if pending is None else pending,
        description=plan.description if description is None else description,
        metadata={**plan.metadata, **(metadata or {})},
        parent_id=parent_id,
        source=_unique(leg.alias for leg in legs if leg.direction == DEBIT),
        destination=_unique(leg.alias for leg in legs if leg.direction == CREDIT),
    )


def instrument_missing(asset: str) -> ApiError:
    return ApiError(
        ErrorCode.ASSET_CODE_NOT_FOUND,
        f"The instrument {asset} does not exist in this ledger or was deleted.",
    )


@dataclass(frozen=True)
class Guard:
    """What must still hold once the balances are locked: deleting an instrument or an account
    locks the same balance rows, and deleting the ledger waits for the ``FOR KEY SHARE`` this
    check takes on it, so a write that checks these after its locks can never land in a ledger,
    instrument or account deleted while it waited."""

    ledger_id: uuid.UUID
    asset: str
    account_ids: tuple[uuid.UUID, ...]


def check_guard(guard: Guard) -> None:
    check_instrument(guard.ledger_id, guard.asset)
    deleted = sorted(
        Account.objects.filter(pk__in=guard.account_ids, deleted_at__isnull=False).values_list(
            "alias", flat=True
        )
    )
    if deleted:
        raise ApiError(
            ErrorCode.ACCOUNT_STATUS_RESTRICTION,
            f"Account {', '.join(deleted)} was deleted; nothing was written.",
        )


def check_instrument(ledger_id: uuid.UUID, asset: str) -> None:
    """Run after the balances are locked: deleting an instrument locks the same rows, so a
    posting can never land in an instrument deleted while it waited. The ledger is checked in
    the same query (and locked against its delete on PostgreSQL)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(INSTRUMENT_SQL, [ledger_id, asset, ledger_id])
            found = cursor.fetchone() is not None
    else:
        found = Instrument.objects.filter(
            ledger_id=ledger_id, code=asset, deleted_at__isnull=True, ledger__deleted_at=None
        ).exists()
    if not found:
        lock_ledger_active(ledger_id)
        raise instrument_missing(asset)


def new_transaction(prepared: PreparedPosting, now: dt.datetime) -> Transaction:
    return Transaction(
        organization_id=prepared.ledger.organization_id,
        ledger_id=prepared.ledger.pk,
        parent_id=prepared.parent_id,
        template=prepared.template,
        type=prepared.template.code,
        description=prepared.description,
        status=Transaction.PRE_APPROVED if prepared.pending else Transaction.SENT,
        amount=prepared.plan.total,
        scale=prepared.plan.scale,
        asset_code=prepared.plan.asset,
        chart_of_accounts_group_name=prepared.plan.group_name,
        source=prepared.source,
        destination=prepared.destination,
        metadata=prepared.metadata,
        legs=[leg.as_json() for leg in prepared.legs],
        created_at=now,
        updated_at=now,
    )


def opening_legs(tx: Transaction, legs: list[ResolvedLeg]) -> list[tuple[ResolvedLeg, str]]:
    """A plain posting moves every leg; a pending one only holds the sources."""
    if tx.status == Transaction.PRE_APPROVED:
        return [(leg, Operation.HOLD) for leg in legs if leg.direction == DEBIT]
    return [(leg, Operation.POST) for leg in legs]


def attach_operations(tx: Transaction, operations: list[Operation]) -> Transaction:
    """Let ``tx.operations.all()`` answer from memory, as a prefetch would."""
    tx._prefetched_objects_cache = {"operations": operations}  # type: ignore[attr-defined]
    return tx


BALANCE_STATE = ("available", "on_hold", "scale", "version", "updated_at")
UPDATE_BALANCE = (
    "UPDATE transactions_balance SET available = %s, on_hold = %s, scale = %s, version = %s, "
    "updated_at = %s WHERE id = %s"
)


def _balance_arrays(rows: list[Balance]) -> list[list[Any]]:
    return [[getattr(b, n) for b in rows] for n in ("pk", *BALANCE_STATE)]


def update_balances(rows: list[Balance]) -> None:
    """Write the new state of locked balance rows (off PostgreSQL, where ``write_posting``
    does it in its one statement): one prepared statement run for each row."""
    fields = [Balance._meta.get_field(name) for name in BALANCE_STATE]
    pk = Balance._meta.pk
    assert pk is not None
    with connection.cursor() as cursor:
        cursor.executemany(
            UPDATE_BALANCE,
            [
                [f.get_db_prep_save(getattr(b, f.attname), connection) for f in fields]
                + [pk.get_db_prep_save(b.pk, connection)]
                for b in rows
            ],
        )


def _write(
    tx: Transaction,
    steps: list[tuple[ResolvedLeg, str]],
    balances: Mapping[uuid.UUID, Balance],
    *,
    insert: bool,
    guarded: bool = False,
) -> list[Operation]:
    """Apply ``steps`` to the locked balances and write it all (with ``tx`` when ``insert``).
    When ``guarded``, the instrument and every touched account must still be active
    (``Guard``); that refusal is answered before any other, such as insufficient funds."""
    if insert:
        # Stamped now that the locks are held, so that an account's operations are in time
        # order as they are in version order (the point-in-time balance relies on it).
        tx.created_at = tx.updated_at = timezone.now()
    touched = sorted({leg.account_id for leg, _ in steps})
    guard = Guard(tx.ledger_id, tx.asset_code, tuple(touched)) if guarded else None
    book = BalanceBook(balances, now=tx.updated_at)
    try:
        operations = [book.apply(tx, leg, effect=effect) for leg, effect in steps]
    except ApiError:
        if guard is not None:
            check_guard(guard)
        raise
    write_posting([tx] if insert else [], operations, [balances[a] for a in touched], guard=guard)
    return operations


# ---------------------------------------------------------------------------------------------
# Public writes


def transaction_post(
    *,
    ledger: Ledger,
    template_code: str,
    variables: Mapping[str, Any],
    metadata: Mapping[str, Any] | None = None,
    description: str | None = None,
    pending: bool | None = None,
    parent_id: uuid.UUID | None = None,
    claim: IdempotencyClaim | None = None,
    dry_run: bool = False,
) -> Transaction:
    """Post (or, with ``dry_run``, only simulate) a transaction from a template."""
    prepared = transaction_prepare(
        ledger=ledger,
        template_code=template_code,
        variables=variables,
        metadata=metadata,
        description=description,
        pending=pending,
        parent_id=parent_id,
    )
    now = timezone.now()
    tx = new_transaction(prepared, now)
    steps = opening_legs(tx, prepared.legs)
    account_ids = [leg.account_id for leg, _ in steps]
    if dry_run:
        check_instrument(ledger.pk, tx.asset_code)
        balances = {b.account_id: b for b in Balance.objects.filter(account_id__in=account_ids)}
        book = BalanceBook(balances, now=now)
        return attach_operations(tx, [book.apply(tx, leg, effect=e) for leg, e in steps])
    try:
        with transaction.atomic(durable=True):
            if claim is not None:
                claim_key(ledger, claim)
            balances = lock_balances(account_ids)
            operations = _write(tx, steps, balances, insert=True, guarded=True)
            attach_operations(tx, operations)
            if claim is not None:
                store_key(ledger, claim, tx, tx=tx)
    except IntegrityError as exc:
        if claim is not None and "idempotency" in str(exc).lower():
            raise key_running() from exc
        raise
    return tx


def key_mismatch() -> ApiError:
    return ApiError(
        ErrorCode.IDEMPOTENCY_KEY_MISMATCH,
        "This idempotency key was already used with a different request body.",
    )


def key_running() -> ApiError:
    return ApiError(
        ErrorCode.IDEMPOTENCY_KEY_RUNNING,
        "A request with this idempotency key is still being processed.",
    )


def claim_key(ledger: Ledger, claim: IdempotencyClaim) -> None:
    try_lock_key(ledger_id=ledger.pk, key=claim.key)
    existing = IdempotencyKey.objects.filter(ledger_id=ledger.pk, key=claim.key).first()
    if existing is None:
        return
    if existing.expires_at > timezone.now():
        if existing.request_hash != claim.request_hash:
            raise key_mismatch()
        raise IdempotentReplay(existing)
    existing.delete()


def store_key(
    ledger: Ledger, claim: IdempotencyClaim, subject: Any, *, tx: Transaction | None = None
) -> None:
    """Keep the answer to ``claim``: ``claim.render(subject)`` with the claim's status."""
    now = timezone.now()
    IdempotencyKey.objects.create(
        organization_id=ledger.organization_id,
        ledger_id=ledger.pk,
        key=claim.key,
        request_hash=claim.request_hash,
        response_status=claim.status_code,
        response_body=claim.render(subject),
        transaction=tx,
        created_at=now,
        expires_at=now + dt.timedelta(seconds=claim.ttl_seconds),
    )


def idempotency_lookup(*, ledger: Ledger, key: str) -> IdempotencyKey | None:
    return IdempotencyKey.objects.filter(
        ledger_id=ledger.pk, key=key, expires_at__gt=timezone.now()
    ).first()


def _legs_of(tx: Transaction) -> list[ResolvedLeg]:
    return [ResolvedLeg.from_json(leg) for leg in tx.legs]


def transaction_commit(*, ledger: Ledger, transaction_id: uuid.UUID) -> Transaction:
    """PRE_APPROVED -> SENT: settle the holds and credit the destinations."""
    with transaction.atomic(durable=True):
        lock_ledger_active(ledger.pk)
        tx = lock_transaction(ledger_id=ledger.pk, transaction_id=transaction_id)
        if tx.status != Transaction.PRE_APPROVED:
            raise ApiError(
                ErrorCode.INVALID_TRANSACTION_STATUS,
                f"Only a PRE_APPROVED transaction can be committed; this one is {tx.status}.",
            )
        legs = _legs_of(tx)
        steps = [
            (leg, Operation.SETTLE if leg.direction == DEBIT else Operation.POST) for leg in legs
        ]
        balances = lock_balances(leg.account_id for leg in legs)
        tx.status = Transaction.SENT
        tx.updated_at = timezone.now()
        tx.save(update_fields=["status", "updated_at"])
        _write(tx, steps, balances, insert=False, guarded=True)
    return _with_operations(tx)


def transaction_revert(*, ledger: Ledger, transaction_id: uuid.UUID) -> Transaction:
    """SENT: post the mirrored transaction. PRE_APPROVED: release the holds (cancel)."""
    with transaction.atomic(durable=True):
        lock_ledger_active(ledger.pk)
        tx = lock_transaction(ledger_id=ledger.pk, transaction_id=transaction_id)
        _check_revertible(tx)
        if tx.status == Transaction.PRE_APPROVED:
            return _cancel_locked(tx)
        legs = [leg.mirrored() for leg in _legs_of(tx)]
        reversal = _reversal_of(tx, Transaction.SENT)
        balances = lock_balances(leg.account_id for leg in legs)
        attach_operations(
            reversal,
            _write(
                reversal,
                [(leg, Operation.POST) for leg in legs],
                balances,
                insert=True,
                guarded=True,
            ),
        )
    return reversal


def transaction_cancel(*, ledger: Ledger, transaction_id: uuid.UUID) -> Transaction:
    """PRE_APPROVED -> CANCELED, releasing the holds through a reverting transaction."""
    with transaction.atomic(durable=True):
        lock_ledger_active(ledger.pk)
        tx = lock_transaction(ledger_id=ledger.pk, transaction_id=transaction_id)
        _check_revertible(tx)
        if tx.status != Transaction.PRE_APPROVED:
            raise ApiError(
                ErrorCode.INVALID_TRANSACTION_STATUS,
                f"Only a PRE_APPROVED transaction can be canceled; this one is {tx.status}.",
            )
        return _cancel_locked(tx)


def _check_revertible(tx: Transaction) -> None:
    if tx.is_reversal:
        raise ApiError(ErrorCode.ALREADY_A_REVERSAL, "A reverting transaction cannot be reverted.")
    if tx.status == Transaction.CANCELED:
        raise ApiError(
            ErrorCode.INVALID_TRANSACTION_STATUS, "A CANCELED transaction cannot be reverted."
        )
    if Transaction.objects.filter(parent_id=tx.pk, is_reversal=True).exists():
        raise ApiError(ErrorCode.REVERT_ALREADY_EXISTS, "This transaction was already reverted.")
    if tx.status not in (Transaction.SENT, Transaction.PRE_APPROVED):
        raise ApiError(
            ErrorCode.INVALID_TRANSACTION_STATUS, f"A {tx.status} transaction cannot be reverted."
        )


def _reversal_of(tx: Transaction, status: str) -> Transaction:
    now = timezone.now()
    return Transaction(
        organization_id=tx.organization_id,
        ledger_id=tx.ledger_id,
        parent_id=tx.pk,
        is_reversal=True,
        template_id=tx.template_id,
        type=tx.type,
        description=tx.description,
        status=status,
        amount=tx.amount,
        scale=tx.scale,
        asset_code=tx.asset_code,
        chart_of_accounts_group_name=tx.chart_of_accounts_group_name,
        source=list(tx.destination),
        destination=list(tx.source),
        metadata=dict(tx.metadata),
        legs=[leg.mirrored().as_json() for leg in _legs_of(tx)],
        created_at=now,
        updated_at=now,
    )


def _cancel_locked(tx: Transaction) -> Transaction:
    sources = [leg for leg in _legs_of(tx) if leg.direction == DEBIT]
    reversal = _reversal_of(tx, Transaction.SENT)
    balances = lock_balances(leg.account_id for leg in sources)
    operations = _write(
        reversal,
        [
            (ResolvedLeg(**{**leg.__dict__, "direction": CREDIT}), Operation.RELEASE)
            for leg in sources
        ],
        balances,
        insert=True,
    )
    tx.status = Transaction.CANCELED
    tx.updated_at = reversal.updated_at
    tx.save(update_fields=["status", "updated_at"])
    return attach_operations(reversal, operations)


def _with_operations(tx: Transaction) -> Transaction:
    return attach_operations(
        tx, list(Operation.objects.filter(transaction_id=tx.pk).order_by("created_at", "id"))
    )


def idempotency_keys_purge(*, now: dt.datetime | None = None) -> int:
    deleted, _ = IdempotencyKey.objects.filter(expires_at__lte=now or timezone.now()).delete()
    return deleted
