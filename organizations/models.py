"""Tenancy and structure: organizations (nestable), ledgers, portfolios, products, accounts,
and the API tokens that reach them."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import models
from django.db.models import Q, Value
from django.db.models.functions import Cast
from django.db.models.lookups import GreaterThanOrEqual

from ledgerproject.db import AmountField, ResourceModel, TimestampedModel, new_id
from ledgerproject.tenancy import TenantForeignKey, TenantOneToOneField, TenantRow

ACTIVE = Q(deleted_at__isnull=True)


class Organization(ResourceModel):
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="children"
    )
    # Materialised path of ids from the root down to this organization ("/<hex>/<hex>/"), so a
    # token's reach (an organization and its descendants) is one prefix test, not a walk.
    path = models.TextField(db_index=True, editable=False)
    legal_name = models.CharField(max_length=256)
    legal_document = models.CharField(max_length=256)
    doing_business_as = models.CharField(max_length=256, null=True, blank=True)
    address = models.JSONField(default=dict, blank=True)

    class Meta(ResourceModel.Meta):
        indexes = [models.Index(fields=["created_at", "id"], name="org_created_idx")]

    def __str__(self) -> str:
        return self.legal_name

    @property
    def ancestor_ids(self) -> list[str]:
        return [part for part in self.path.split("/") if part]


class Ledger(TenantRow, ResourceModel):
    # Indexed by the primary key (organization_id, id) and ledger_org_created_idx.
    organization = models.ForeignKey(
        Organization, on_delete=models.PROTECT, related_name="ledgers", db_index=False
    )
    name = models.CharField(max_length=256)
    # The ledger's days, for closing periods (an IANA name): docs/TIME.md.
    time_zone = models.CharField(max_length=64, default="UTC", db_default="UTC")
    # The last day of the closed books: nothing effective on or before it is written.
    closed_through = models.DateField(null=True, blank=True)
    # The first instant of the open period (the start of the day after ``closed_through`` in
    # ``time_zone``), worked out once when the period changes (``organizations.periods``): the
    # one boundary every check of a write compares with, in Python and in SQL alike.
    period_opens_at = models.DateTimeField(null=True, blank=True, editable=False)
    # The oldest a stored rate may be, in seconds, for a posting that converts at it (a rate
    # is as old as the time since its value was set): docs/CONVERSIONS.md. None: any age.
    max_rate_age = models.PositiveIntegerField(
        null=True, blank=True, verbose_name="max rate age (seconds)"
    )

    class Meta(ResourceModel.Meta):
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "name"], condition=ACTIVE, name="ledger_name_active_uniq"
            )
        ]
        indexes = [
            models.Index(fields=["organization", "created_at", "id"], name="ledger_org_created_idx")
        ]
        permissions = [("reopen_period", "Can reopen a ledger's closed period")]

    def __str__(self) -> str:
        return self.name


class LedgerResource(TenantRow, ResourceModel):
    """A resource held in one ledger; ``organization`` is denormalised for tenancy filters."""

    # No index of their own: the primary key (organization_id, id) and each model's
    # (ledger, created_at, id) index lead with these columns: every index costs every posting.
    organization = models.ForeignKey(
        Organization, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    ledger = TenantForeignKey(Ledger, on_delete=models.PROTECT, related_name="+", db_index=False)

    class Meta(ResourceModel.Meta):
        abstract = True


class Portfolio(LedgerResource):
    entity_id = models.CharField(max_length=256, null=True, blank=True)
    name = models.CharField(max_length=256)

    class Meta(LedgerResource.Meta):
        indexes = [
            models.Index(
                fields=["ledger", "created_at", "id"], name="portfolio_ledger_created_idx"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class Product(LedgerResource):
    name = models.CharField(max_length=256)

    class Meta(LedgerResource.Meta):
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "ledger", "name"],
                condition=ACTIVE,
                name="product_name_active_uniq",
            )
        ]
        indexes = [
            models.Index(fields=["ledger", "created_at", "id"], name="product_ledger_created_idx"),
        ]

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class AccountStatus:
    """A code an account's status may have, and what it lets the account do in a posting
    (``allowSending`` and ``allowReceiving`` may narrow it further, never widen it). ``meaning``
    names what a numbered code of the specification stands for."""

    code: str
    sends: bool
    receives: bool
    meaning: str = ""

    @property
    def effect(self) -> str:
        return {
            (True, True): "sends and receives",
            (False, True): "receives only",
            (True, False): "sends only",
            (False, False): "neither sends nor receives",
        }[self.sends, self.receives]

    @property
    def label(self) -> str:
        return (
            f"{self.code} ({self.meaning}): {self.effect}"
            if self.meaning
            else (f"{self.code}: {self.effect}")
        )


# The closed list of account statuses (docs/API.md, Account statuses). The specification shows
# ACTIVE and the numbered codes 001 Active, 002 Blocked and 003 Pre-launch; the named ones are
# the words clients and staff write for those states. ``transactions.guards.check_account``
# refuses a posting leg the status does not allow (422 0024).
ACCOUNT_STATUSES = {
    status.code: status
    for status in (
        AccountStatus("ACTIVE", sends=True, receives=True),
        AccountStatus("001", sends=True, receives=True, meaning="Active"),
        AccountStatus("003", sends=False, receives=True, meaning="Pre-launch"),
        AccountStatus("FROZEN", sends=False, receives=False),
        AccountStatus("BLOCKED", sends=False, receives=False),
        AccountStatus("002", sends=False, receives=False, meaning="Blocked"),
        AccountStatus("INACTIVE", sends=False, receives=False),
    )
}


class Account(LedgerResource):
    EXTERNAL = "external"
    EXTERNAL_PREFIX = "@external/"
    # ``@conversion/<CODE>``: the account of an asset that conversions go through, made by the
    # ledger on the first conversion in or out of the asset (``conversion_accounts_ensure``).
    CONVERSION = "conversion"
    CONVERSION_PREFIX = "@conversion/"
    MANAGED_PREFIXES = (EXTERNAL_PREFIX, CONVERSION_PREFIX)
    # An alias: @ then 1 to 100 of letters, digits and _ - / . (the API and the admin check it).
    ALIAS_PATTERN = r"^@[A-Za-z0-9_\-/.]{1,100}$"

    portfolio = TenantForeignKey(
        Portfolio, null=True, blank=True, on_delete=models.PROTECT, related_name="accounts"
    )
    product = TenantForeignKey(
        Product, null=True, blank=True, on_delete=models.PROTECT, related_name="accounts"
    )
    parent_account = TenantForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="children"
    )
    entity_id = models.CharField(max_length=256, null=True, blank=True)
    name = models.CharField(max_length=256, blank=True, default="")
    alias = models.CharField(max_length=101)
    type = models.CharField(max_length=100, default="deposit")
    asset_code = models.CharField(max_length=100)
    allow_sending = models.BooleanField(default=True)
    allow_receiving = models.BooleanField(default=True)
    status_code = models.CharField(
        max_length=100,
        default="ACTIVE",
        choices=[(status.code, status.label) for status in ACCOUNT_STATUSES.values()],
    )

    class Meta(LedgerResource.Meta):
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "ledger", "alias"],
                condition=ACTIVE,
                name="account_alias_active_uniq",
            ),
            models.CheckConstraint(
                condition=Q(status_code__in=list(ACCOUNT_STATUSES)), name="account_status_known"
            ),
        ]
        indexes = [
            models.Index(fields=["ledger", "created_at", "id"], name="account_ledger_created_idx"),
            models.Index(fields=["ledger", "alias"], name="account_ledger_alias_idx"),
            # The list filtered by asset, in its order. Led by the asset, not the ledger: on
            # tables never analyzed PostgreSQL took an index led by the ledger for the cheapest
            # way to a posting's accounts, reading every account of the ledger (migration 0008).
            models.Index(
                fields=["asset_code", "ledger", "created_at", "id"],
                name="account_ledger_asset_list_idx",
            ),
        ]

    def __str__(self) -> str:
        return self.alias

    @property
    def is_external(self) -> bool:
        """Managed by the ledger (an instrument's external account, or an asset's conversion
        account): it may go negative, and no client creates, changes or deletes it."""
        return self.type in (self.EXTERNAL, self.CONVERSION)


class ApiToken(TimestampedModel):
    """An API key. Only a hash of the secret is stored; the raw token is shown once."""

    name = models.CharField(max_length=100, unique=True)
    prefix = models.CharField(max_length=16, unique=True, editable=False)
    secret_hash = models.CharField(max_length=64, editable=False)
    organizations = models.ManyToManyField(Organization, blank=True, related_name="api_tokens")
    read_only = models.BooleanField(default=False)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta(TimestampedModel.Meta):
        verbose_name = "API token"

    def __str__(self) -> str:
        return self.name


class AuthEpoch(models.Model):
    """One row whose ``value`` changes with every change to an API token, to a token's
    organizations or to any organization (its path decides a token's reach). On PostgreSQL
    triggers change it, in the same database transaction as the change, whatever made it (the
    services, the admin, a queryset update, plain SQL): the value is the next of a sequence,
    so it never repeats. A process that keeps tokens in memory
    (``ledgerproject.api.authentication``) reads it in the statement that resolves the ledger
    and trusts its copy only while the value is the one it read with the token."""

    id = models.PositiveSmallIntegerField(primary_key=True, default=1)
    value = models.BigIntegerField(default=0)

    class Meta:
        verbose_name = "authentication epoch"


# The epoch as a value in a statement (the token's, the ledger's, the one that locks balances).
EPOCH_SQL = "(SELECT value FROM organizations_authepoch WHERE id = 1)"


def within_overdraft() -> GreaterThanOrEqual:
    """``available + overdraft_limit >= 0``, both at the balance's scale: exact on PostgreSQL
    (``numeric(38, 0)``). On SQLite, which stores these columns as text, the sum is computed on
    the cast numbers (exact within 64-bit integers)."""
    number = models.DecimalField(max_digits=38, decimal_places=0)
    return GreaterThanOrEqual(Cast("available", number) + Cast("overdraft_limit", number), Value(0))


class Balance(TenantRow, models.Model):
    """The running balance of one account. ``version`` counts the operations written to it."""

    id = models.UUIDField(primary_key=True, default=new_id, editable=False)
    # Indexed by the primary key (organization_id, id) and balance_ledger_asset_idx.
    organization = models.ForeignKey(
        Organization, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    ledger = TenantForeignKey(Ledger, on_delete=models.PROTECT, related_name="+", db_index=False)
    # One balance per account: Django's one-to-one. In the database the uniqueness is the
    # constraint below, which includes organization (transactions/migrations/0003; the model
    # moved here, with its table, in organizations/migrations/0004).
    account = TenantOneToOneField(Account, on_delete=models.PROTECT, related_name="balance")
    asset_code = models.CharField(max_length=100)
    is_external = models.BooleanField(default=False)
    available = AmountField(default=0)
    on_hold = AmountField(default=0)
    scale = models.PositiveSmallIntegerField(default=0)
    # How far below zero ``available`` may go, at the balance's own ``scale`` (rescaled with it),
    # so that the check below compares two integers of one scale: exact. Ignored for externals.
    overdraft_limit = AmountField(default=0)
    version = models.BigIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)
    # Whether the account has an active balance monitor (``organizations.monitors``): a
    # posting reads its monitors only then. Null is false: a column added with no default, so
    # that SQLite adds it in place instead of remaking the table (which would lose the
    # composite unique key of ``tenancy``).
    monitored = models.BooleanField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(is_external=True) | Q(within_overdraft()),
                name="balance_available_within_overdraft",
            ),
            models.CheckConstraint(
                condition=Q(overdraft_limit__gte=0), name="balance_overdraft_not_negative"
            ),
            models.CheckConstraint(
                condition=Q(on_hold__gte=0), name="balance_on_hold_not_negative"
            ),
            models.CheckConstraint(condition=Q(scale__lte=18), name="balance_scale_range"),
            models.UniqueConstraint(
                fields=["account", "organization"], name="balance_account_uniq"
            ),
        ]
        indexes = [models.Index(fields=["ledger", "asset_code"], name="balance_ledger_asset_idx")]


class BalanceMonitor(LedgerResource):
    """A condition on one account's balance against a threshold, and whether it held when the
    balance was last seen (``organizations.monitors``, docs/BALANCE-MONITORS.md)."""

    AVAILABLE, ON_HOLD, OVERDRAFT_USED = "available", "onHold", "overdraftUsed"
    MEASURES = (AVAILABLE, ON_HOLD, OVERDRAFT_USED)
    BELOW, ABOVE, CROSSING = "below", "above", "crossing"
    CONDITIONS = (BELOW, ABOVE, CROSSING)

    account = TenantForeignKey(
        Account, on_delete=models.PROTECT, related_name="monitors", db_index=False
    )
    measure = models.CharField(max_length=16, choices=[(m, m) for m in MEASURES])
    condition = models.CharField(max_length=16, choices=[(c, c) for c in CONDITIONS])
    threshold = AmountField()
    threshold_scale = models.PositiveSmallIntegerField(default=0)
    description = models.CharField(max_length=256, blank=True, default="")
    # The condition held (for ``crossing``: the measure was at or above the threshold) when the
    # balance was last seen; changed only under the locks of the balances watched and of this
    # row (``organizations.monitors``).
    holds = models.BooleanField(default=False)
    last_triggered_at = models.DateTimeField(null=True, blank=True)
    # A tree monitor (``tree``; null is false) watches the account's rolled-up balance in
    # ``asset_code``: its own balance plus those of every account under it. An account monitor
    # watches its account's balance, in the account's asset. What a tree monitor last saw of its
    # sum, exactly (``{"available", "onHold", "scale"}``, integers of any size), is kept in
    # ``seen``: each posting into the tree adds its change under this row's lock.
    tree = models.BooleanField(null=True, blank=True)
    asset_code = models.CharField(max_length=100, null=True, blank=True)
    seen = models.JSONField(null=True, blank=True)

    class Meta(LedgerResource.Meta):
        constraints = [
            models.CheckConstraint(
                condition=Q(measure__in=["available", "onHold", "overdraftUsed"]),
                name="monitor_measure_known",
            ),
            models.CheckConstraint(
                condition=Q(condition__in=["below", "above", "crossing"]),
                name="monitor_condition_known",
            ),
            models.CheckConstraint(
                condition=Q(threshold_scale__lte=18), name="monitor_threshold_scale_range"
            ),
        ]
        indexes = [
            models.Index(fields=["ledger", "created_at", "id"], name="monitor_ledger_created_idx"),
            models.Index(
                fields=["account"], condition=Q(deleted_at__isnull=True), name="monitor_account_idx"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.measure} {self.condition} {self.threshold}|{self.threshold_scale}"
