"""Money in motion: transactions, their append-only operations, and idempotency keys. (The
balances they change live with the accounts, in ``organizations.models.Balance``.)"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from ledgerproject import actors
from ledgerproject.db import AmountField, TimestampedModel
from ledgerproject.tenancy import TenantForeignKey, TenantRow
from organizations.models import Account, Ledger, Organization


class Transaction(TenantRow, TimestampedModel):
    CREATED = "CREATED"
    PRE_APPROVED = "PRE_APPROVED"
    SENT = "SENT"
    CANCELED = "CANCELED"
    STATUSES = (CREATED, PRE_APPROVED, SENT, CANCELED)
    # The operations a posting made, kept on the instance it answers with
    # (``prepare.attach_operations``), so that its rendering reads no row back.
    made_operations: list[Operation] | None = None

    # No index of their own: the primary key (organization_id, id) and tx_ledger_created_idx
    # lead with these columns, and every index is paid by every posting.
    organization = models.ForeignKey(
        Organization, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    ledger = TenantForeignKey(Ledger, on_delete=models.PROTECT, related_name="+", db_index=False)
    parent = TenantForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="children"
    )
    is_reversal = models.BooleanField(default=False)
    template = TenantForeignKey(
        "templates_dsl.TransactionTemplate",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
    )
    type = models.CharField(max_length=100)
    description = models.TextField(null=True, blank=True)
    status = models.CharField(max_length=20, default=CREATED)
    amount = AmountField()
    scale = models.PositiveSmallIntegerField()
    asset_code = models.CharField(max_length=100)
    chart_of_accounts_group_name = models.CharField(max_length=256, blank=True, default="")
    source = models.JSONField(default=list)
    destination = models.JSONField(default=list)
    metadata = models.JSONField(default=dict, blank=True)
    # The planned legs (account id, alias, direction, amount, description, chart of accounts):
    # what commit settles and what a revert mirrors.
    legs = models.JSONField(default=list)
    # A pending transaction past this instant is canceled (``states.expire``); commit refuses it.
    expires_at = models.DateTimeField(null=True, blank=True)
    # When the money moved, as the books tell it (``effectiveAt``): at most the time it was
    # posted (``created_at``), which is when the ledger learned of it. docs/TIME.md.
    effective_at = models.DateTimeField(default=timezone.now)
    # A pending transaction commits itself at this instant (``commitAt``: the scheduler,
    # ``transactions.scheduling``), unless it was committed, canceled or expired first.
    commit_at = models.DateTimeField(null=True, blank=True)
    # A transaction that delivers in another asset than it sends: the rate it converted at and
    # the two amounts (``instruments.conversion``, docs/CONVERSIONS.md); None otherwise. Its
    # commit, cancel and revert carry it too, and so does every operation of theirs.
    conversion = models.JSONField(null=True, blank=True)
    # Who posted it, in which request (``ledgerproject.actors``).
    # Database defaults too, for rows written by SQL of its own (a migration, a bulk load).
    actor_kind = models.CharField(
        max_length=16, choices=[(k, k) for k in actors.KINDS], default="system", db_default="system"
    )
    actor_name = models.CharField(max_length=256, default="", db_default="")
    actor_id = models.CharField(max_length=64, null=True, blank=True)
    request_id = models.CharField(max_length=128, default="", db_default="", blank=True)

    def __str__(self) -> str:
        return f"{self.type} {self.pk}"

    class Meta(TimestampedModel.Meta):
        constraints = [
            models.UniqueConstraint(
                fields=["parent", "organization"],
                condition=Q(is_reversal=True),
                name="transaction_one_reversal",
            ),
            models.CheckConstraint(
                condition=Q(status__in=["CREATED", "PRE_APPROVED", "SENT", "CANCELED"]),
                name="transaction_status_valid",
            ),
            models.CheckConstraint(condition=Q(amount__gt=0), name="transaction_amount_positive"),
            # What a ledger learns it cannot have learned before it happened.
            models.CheckConstraint(
                condition=Q(effective_at__lte=F("created_at")),
                name="transaction_effective_by_posting",
            ),
            # A hold commits itself before it would expire, or it could never commit.
            models.CheckConstraint(
                condition=Q(commit_at__isnull=True)
                | Q(expires_at__isnull=True)
                | Q(commit_at__lt=F("expires_at")),
                name="transaction_commits_before_expiry",
            ),
        ]
        indexes = [
            models.Index(fields=["ledger", "created_at", "id"], name="tx_ledger_created_idx"),
            models.Index(fields=["ledger", "status", "created_at"], name="tx_ledger_status_idx"),
            models.Index(fields=["ledger", "effective_at", "id"], name="tx_ledger_effective_idx"),
            models.Index(fields=["ledger", "type"], name="tx_ledger_type_idx"),
            models.Index(fields=["ledger", "asset_code"], name="tx_ledger_asset_idx"),
            models.Index(
                fields=["expires_at"],
                condition=Q(status="PRE_APPROVED", expires_at__isnull=False),
                name="tx_pending_expiry_idx",
            ),
            models.Index(
                fields=["commit_at"],
                condition=Q(status="PRE_APPROVED", commit_at__isnull=False),
                name="tx_pending_commit_idx",
            ),
        ]

    @property
    def inline(self) -> bool:
        """Posted with its template in the request (``POST .../transactions/dsl|json``): no
        stored template, and an empty ``type``."""
        return self.template_id is None

    def operation_rows(self) -> Any:
        """The operations a posting made, kept on this instance (a dry run's too, which were
        never written), else those stored."""
        return self.made_operations if self.made_operations is not None else self.operations.all()


class Operation(TenantRow, TimestampedModel):
    """One balance change. Append-only: never updated, never deleted."""

    DEBIT = "DEBIT"
    CREDIT = "CREDIT"
    # What the operation did to the balance: POST moves available; HOLD moves available to
    # onHold (pending create); SETTLE takes from onHold (commit); RELEASE returns onHold to
    # available (cancel).
    POST = "POST"
    HOLD = "HOLD"
    SETTLE = "SETTLE"
    RELEASE = "RELEASE"

    # Indexed by the primary key (organization_id, id), op_transaction_idx and
    # op_account_created_idx, not by indexes of their own: every index is paid by every posting.
    organization = models.ForeignKey(
        Organization, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    ledger = TenantForeignKey(Ledger, on_delete=models.PROTECT, related_name="+")
    transaction = TenantForeignKey(
        Transaction, on_delete=models.PROTECT, related_name="operations", db_index=False
    )
    account = TenantForeignKey(
        Account, on_delete=models.PROTECT, related_name="operations", db_index=False
    )
    account_alias = models.CharField(max_length=101)
    portfolio_id = models.UUIDField(null=True, blank=True)
    type = models.CharField(max_length=6)
    effect = models.CharField(max_length=7, default=POST)
    asset_code = models.CharField(max_length=100)
    chart_of_accounts = models.CharField(max_length=256, blank=True, default="")
    description = models.TextField(blank=True, default="")
    amount = AmountField()
    scale = models.PositiveSmallIntegerField()
    balance_available = AmountField()
    balance_on_hold = AmountField()
    balance_scale = models.PositiveSmallIntegerField()
    balance_available_after = AmountField()
    balance_on_hold_after = AmountField()
    balance_scale_after = models.PositiveSmallIntegerField()
    balance_version = models.BigIntegerField()
    metadata = models.JSONField(default=dict, blank=True)
    # When this change of the balance took effect: its posting's ``effectiveAt``, or the time a
    # commit, cancel or revert gave (its own ``effectiveAt``, by default when it was made).
    effective_at = models.DateTimeField(default=timezone.now)
    # Its transaction's ``conversion``, when that converts between assets.
    conversion = models.JSONField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.type} {self.account_alias} ({self.pk})"

    class Meta(TimestampedModel.Meta):
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="operation_amount_positive"),
            models.CheckConstraint(
                condition=Q(effective_at__lte=F("created_at")),
                name="operation_effective_by_posting",
            ),
            models.CheckConstraint(
                condition=Q(type__in=["DEBIT", "CREDIT"]), name="operation_type_valid"
            ),
            models.CheckConstraint(
                condition=Q(effect__in=["POST", "HOLD", "SETTLE", "RELEASE"]),
                name="operation_effect_valid",
            ),
            models.CheckConstraint(
                condition=Q(balance_scale_after__gte=F("balance_scale")),
                name="operation_scale_never_shrinks",
            ),
            models.UniqueConstraint(
                fields=["account", "balance_version", "organization"],
                name="operation_account_version_uniq",
            ),
            # What the engine writes, and all that double entry can read: a DEBIT posts, holds
            # or settles; a CREDIT posts or releases (a credit that settled would take money
            # off a hold with nothing to show for it in its transaction's sums).
            models.CheckConstraint(
                condition=Q(type="DEBIT", effect__in=["POST", "HOLD", "SETTLE"])
                | Q(type="CREDIT", effect__in=["POST", "RELEASE"]),
                name="operation_type_with_effect",
            ),
        ]
        indexes = [
            models.Index(fields=["transaction"], name="op_transaction_idx"),
            models.Index(fields=["account", "created_at"], name="op_account_created_idx"),
            models.Index(fields=["account", "effective_at"], name="op_account_effective_idx"),
        ]


class IdempotencyKey(TenantRow, models.Model):
    # Indexed by idempotency_key_uniq (organization, ledger, key).
    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    ledger = TenantForeignKey(Ledger, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    request_hash = models.CharField(max_length=64)
    response_status = models.PositiveSmallIntegerField()
    # The answer as rendered, recorded right after COMMIT; until then (or if the process died
    # in between) the answer is rendered again from ``transaction`` or a batch's ``outcome``.
    response_body = models.JSONField(null=True, blank=True)
    transaction = TenantForeignKey(
        Transaction, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    outcome = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "ledger", "key"], name="idempotency_key_uniq"
            )
        ]


class ScheduledPosting(TenantRow, TimestampedModel):
    """A posting to be made at ``scheduled_for`` (``scheduledFor``): the request as it was
    accepted, posted then by the scheduler (``transactions.scheduling``) through the engine, or
    canceled before. It moves no money of its own. docs/TIME.md has the states."""

    SCHEDULED = "SCHEDULED"
    POSTED = "POSTED"
    FAILED = "FAILED"
    CANCELED = "CANCELED"
    STATUSES = (SCHEDULED, POSTED, FAILED, CANCELED)

    organization = models.ForeignKey(
        Organization, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    ledger = TenantForeignKey(Ledger, on_delete=models.PROTECT, related_name="+", db_index=False)
    status = models.CharField(max_length=20, default=SCHEDULED)
    scheduled_for = models.DateTimeField()
    # The posting as it was asked for: a stored template's code, or an inline template as
    # template-language text (``dsl``), and the options of any posting.
    template_code = models.CharField(max_length=100, blank=True, default="")
    dsl = models.TextField(blank=True, default="")
    variables = models.JSONField(default=dict, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    description = models.TextField(null=True, blank=True)
    pending = models.BooleanField(null=True, blank=True)
    parent_id = models.UUIDField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    commit_at = models.DateTimeField(null=True, blank=True)
    # What the request asked of a conversion's rate (``rate``), checked again when it posts.
    rate = models.JSONField(null=True, blank=True)
    # What became of it: the transaction it posted, or the refusal (the API's error body).
    transaction = TenantForeignKey(
        Transaction, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    error = models.JSONField(null=True, blank=True)
    # A scheduler working on it until then; others leave it alone meanwhile (an optimisation:
    # the row's lock, taken when it is posted, is what makes it post once).
    claimed_until = models.DateTimeField(null=True, blank=True)
    # Who scheduled it; the transaction it posts records them as its actor too.
    actor_kind = models.CharField(
        max_length=16, choices=[(k, k) for k in actors.KINDS], default="system"
    )
    actor_name = models.CharField(max_length=256, default="")
    actor_id = models.CharField(max_length=64, null=True, blank=True)
    request_id = models.CharField(max_length=128, default="", blank=True)

    def __str__(self) -> str:
        return (
            f"{self.template_code or 'inline'} at {self.scheduled_for:%Y-%m-%d %H:%M} ({self.pk})"
        )

    class Meta(TimestampedModel.Meta):
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["SCHEDULED", "POSTED", "FAILED", "CANCELED"]),
                name="scheduled_status_valid",
            ),
            # A stored template's code or an inline template's text, never both.
            models.CheckConstraint(
                condition=(Q(template_code="") & ~Q(dsl="")) | (~Q(template_code="") & Q(dsl="")),
                name="scheduled_one_template",
            ),
            # Posted exactly when it names its transaction; failed exactly when it says why.
            models.CheckConstraint(
                condition=Q(status="POSTED", transaction__isnull=False)
                | (~Q(status="POSTED") & Q(transaction__isnull=True)),
                name="scheduled_posted_names_transaction",
            ),
            models.CheckConstraint(
                condition=Q(status="FAILED", error__isnull=False)
                | (~Q(status="FAILED") & Q(error__isnull=True)),
                name="scheduled_failed_says_why",
            ),
        ]
        indexes = [
            models.Index(
                fields=["ledger", "created_at", "id"], name="scheduled_ledger_created_idx"
            ),
            models.Index(
                fields=["scheduled_for"],
                condition=Q(status="SCHEDULED"),
                name="scheduled_due_idx",
            ),
        ]


class ApprovalRule(TenantRow, TimestampedModel):
    """A ledger's rule that an action in the back office needs a second person
    (``transactions.approvals``, docs/BACK-OFFICE.md#approvals): a posting, or a revert, in
    ``asset_code`` (any asset when blank) of more than ``above`` at ``above_scale`` (any amount
    when null); an overdraft limit set above that (in the account's asset); reopening a closed
    period (neither asset nor amount)."""

    POST, REVERT, LIMIT, REOPEN = "post", "revert", "limit", "reopen"
    ACTIONS = (POST, REVERT, LIMIT, REOPEN)
    NAMES = {
        POST: "manual posting",
        REVERT: "revert",
        LIMIT: "overdraft limit change",
        REOPEN: "reopening a closed period",
    }

    organization = models.ForeignKey(
        Organization, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    ledger = TenantForeignKey(Ledger, on_delete=models.PROTECT, related_name="+", db_index=False)
    action = models.CharField(max_length=16, choices=list(NAMES.items()))
    asset_code = models.CharField(max_length=100, blank=True, default="")
    above = AmountField(null=True, blank=True)
    above_scale = models.PositiveSmallIntegerField(default=0)

    class Meta(TimestampedModel.Meta):
        indexes = [
            models.Index(fields=["organization", "ledger", "action"], name="approval_rule_idx")
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(action__in=["post", "revert", "limit", "reopen"]),
                name="approval_rule_action_known",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_action_display()} {self.asset_code or 'any asset'}"

    def clean(self) -> None:
        if self.action == self.REOPEN and (self.asset_code or self.above is not None):
            raise ValidationError(
                "A rule for reopening a period names neither an asset nor an amount."
            )


class Approval(TenantRow, TimestampedModel):
    """An action a maker proposed in the back office and a checker decides: until then nothing
    moves. ``request`` is what to do (a posting's template, variables and options; the
    transaction to revert), ``summary`` what it would do, as both were shown it."""

    PENDING, DONE, REJECTED, FAILED = "PENDING", "DONE", "REJECTED", "FAILED"
    STATUSES = (PENDING, DONE, REJECTED, FAILED)

    organization = models.ForeignKey(
        Organization, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    ledger = TenantForeignKey(Ledger, on_delete=models.PROTECT, related_name="+", db_index=False)
    action = models.CharField(max_length=16, choices=[(a, a) for a in ApprovalRule.ACTIONS])
    request = models.JSONField(default=dict)
    summary = models.TextField()
    status = models.CharField(max_length=16, default=PENDING)
    maker_id = models.CharField(max_length=64)
    maker_name = models.CharField(max_length=256)
    maker_reason = models.CharField(max_length=actors.MAX_REASON)
    checker_id = models.CharField(max_length=64, null=True, blank=True)
    checker_name = models.CharField(max_length=256, blank=True, default="")
    checker_reason = models.CharField(max_length=actors.MAX_REASON, blank=True, default="")
    decided_at = models.DateTimeField(null=True, blank=True)
    # What came of it: the transaction it made, or the refusal (code and description).
    transaction = TenantForeignKey(
        Transaction, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    error = models.JSONField(null=True, blank=True)

    class Meta(TimestampedModel.Meta):
        indexes = [
            models.Index(fields=["organization", "ledger", "status"], name="approval_status_idx")
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["PENDING", "DONE", "REJECTED", "FAILED"]),
                name="approval_status_known",
            ),
            models.CheckConstraint(
                condition=Q(action__in=["post", "revert", "limit", "reopen"]),
                name="approval_action_known",
            ),
            # A decision is another person's than the proposal's.
            models.CheckConstraint(
                condition=Q(checker_id__isnull=True) | ~Q(checker_id=F("maker_id")),
                name="approval_checker_not_maker",
            ),
        ]
        permissions = [("decide_approval", "Can approve or reject what another proposed")]

    def __str__(self) -> str:
        return f"{self.action} {self.pk} ({self.status})"
