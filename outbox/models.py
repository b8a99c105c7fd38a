"""Events (the transactional outbox), webhook subscriptions and their deliveries.

An event row is written in the database transaction of its change (``outbox.record``), so it
exists if and only if the change committed. On PostgreSQL each row carries the id of the
transaction that wrote it (``xid``, a database default); readers order by ``(xid, seq)`` and see
only events below the oldest transaction still running (``ordering.visible_below``), so an
event can never appear behind a reader's cursor. On SQLite writers are serialized and ``xid``
stays 0: the order is ``seq``."""

from __future__ import annotations

from django.db import models

from ledgerproject import actors
from ledgerproject.db import new_id


class Event(models.Model):
    seq = models.BigAutoField(primary_key=True)
    event_id = models.UUIDField(default=new_id, editable=False)
    # The writing transaction's id on PostgreSQL (a column default set by the migration, so no
    # statement sends it); 0 elsewhere.
    xid = models.BigIntegerField(db_default=0, editable=False)
    type = models.CharField(max_length=64)
    organization_id = models.UUIDField()
    ledger_id = models.UUIDField(null=True, blank=True)
    resource_id = models.UUIDField()
    created_at = models.DateTimeField()
    data = models.JSONField()
    # Who made the change, in which request, from where (``ledgerproject.actors``).
    # Database defaults too, for rows written by SQL of its own (a migration, a bulk load).
    actor_kind = models.CharField(
        max_length=16, choices=[(k, k) for k in actors.KINDS], default="system", db_default="system"
    )
    actor_name = models.CharField(max_length=256, default="", db_default="")
    actor_id = models.CharField(max_length=64, null=True, blank=True)
    request_id = models.CharField(max_length=128, default="", db_default="", blank=True)
    client_address = models.GenericIPAddressField(null=True, blank=True)
    # The reason staff gave for the change (``actors.reason``); null when none was asked.
    reason = models.CharField(max_length=actors.MAX_REASON, null=True, blank=True)
    # Set by the worker: deliveries created for the matching subscriptions / confirmed by the
    # broker. Null until then (partial indexes keep the worker's scans short).
    dispatched_at = models.DateTimeField(null=True, blank=True)
    published_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["xid", "seq"]
        # Unique within its tenant (the tenant tables' rule, docs/SCALING.md).
        constraints = [
            models.UniqueConstraint(fields=["organization_id", "event_id"], name="event_id_unique")
        ]
        indexes = [
            models.Index(fields=["organization_id", "xid", "seq"], name="event_org_order_idx"),
            models.Index(fields=["ledger_id", "xid", "seq"], name="event_ledger_order_idx"),
            # A resource's events: a transaction's proof, and the books checked against them.
            models.Index(fields=["resource_id", "xid", "seq"], name="event_resource_idx"),
            models.Index(
                fields=["seq"],
                name="event_undispatched_idx",
                condition=models.Q(dispatched_at__isnull=True),
            ),
            models.Index(
                fields=["seq"],
                name="event_unpublished_idx",
                condition=models.Q(published_at__isnull=True),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.type} {self.event_id}"


class WebhookSubscription(models.Model):
    ACTIVE, PAUSED = "ACTIVE", "PAUSED"

    id = models.UUIDField(primary_key=True, default=new_id, editable=False)
    organization_id = models.UUIDField()
    ledger_id = models.UUIDField(null=True, blank=True)
    url = models.CharField(max_length=2048)  # the rule: outbox.webhooks.check_url
    event_types = models.JSONField(default=list)
    secret = models.CharField(max_length=128, editable=False)
    STATUSES = [(ACTIVE, ACTIVE), (PAUSED, PAUSED)]
    status = models.CharField(max_length=16, choices=STATUSES, default=ACTIVE)
    description = models.CharField(max_length=256, blank=True, default="")
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    deleted_at = models.DateTimeField(null=True, blank=True)
    # Kept by the worker (outbox.delivery.record): failed attempts in a row (reset by a 2xx),
    # the last failure, and the time before which none of its deliveries is attempted again
    # once it has failed ``WEBHOOK_SUSPEND_AFTER`` times in a row.
    consecutive_failures = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True, default="")
    last_error_at = models.DateTimeField(null=True, blank=True)
    suspended_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [
            models.Index(fields=["organization_id", "created_at", "id"], name="hook_org_idx")
        ]

    def __str__(self) -> str:
        return self.url

    def matches(self, event: Event) -> bool:
        if self.ledger_id is not None and self.ledger_id != event.ledger_id:
            return False
        return "*" in self.event_types or event.type in self.event_types


class Delivery(models.Model):
    PENDING, SUCCEEDED, FAILED = "PENDING", "SUCCEEDED", "FAILED"

    id = models.UUIDField(primary_key=True, default=new_id, editable=False)
    subscription = models.ForeignKey(
        WebhookSubscription, on_delete=models.CASCADE, related_name="deliveries"
    )
    event = models.ForeignKey(Event, on_delete=models.CASCADE, related_name="deliveries")
    status = models.CharField(
        max_length=16,
        choices=[(PENDING, PENDING), (SUCCEEDED, SUCCEEDED), (FAILED, FAILED)],
        default=PENDING,
    )
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField()
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    # While an attempt is in flight: the claim's token and when it lapses. A worker that dies
    # mid-attempt leaves both; once the time passes the attempt is recorded as failed.
    lease = models.UUIDField(null=True, blank=True, editable=False)
    leased_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        verbose_name_plural = "deliveries"
        constraints = [
            models.UniqueConstraint(fields=["subscription", "event"], name="delivery_once")
        ]
        indexes = [
            models.Index(
                fields=["next_attempt_at"],
                name="delivery_due_idx",
                condition=models.Q(status="PENDING"),
            ),
            models.Index(
                fields=["leased_until"],
                name="delivery_leased_idx",
                condition=models.Q(leased_until__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.event} -> {self.subscription}"


class DeliveryAttempt(models.Model):
    id = models.UUIDField(primary_key=True, default=new_id, editable=False)
    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="attempts_made")
    number = models.PositiveIntegerField()
    started_at = models.DateTimeField()
    duration_ms = models.PositiveIntegerField(default=0)
    status_code = models.PositiveIntegerField(null=True, blank=True)
    response_body = models.TextField(blank=True, default="")
    error = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["started_at", "id"]

    def __str__(self) -> str:
        return f"attempt {self.number} of {self.delivery_id}"


class Lease(models.Model):
    """A named job only one worker process does at a time (publishing to RabbitMQ, in order):
    held until ``expires_at``, renewed by its holder, taken over by another once it lapses."""

    name = models.CharField(max_length=64, primary_key=True)
    holder = models.UUIDField()
    expires_at = models.DateTimeField()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name
