"""Abstract model bases shared by every tenant resource: ids, timestamps, status, metadata."""

from __future__ import annotations

import uuid

from django.db import models
from django.utils import timezone
from uuid6 import uuid7


def new_id() -> uuid.UUID:
    """Time-ordered UUIDv7 ids keep primary-key indexes append-mostly."""
    return uuid.UUID(int=uuid7().int)


class TimestampedModel(models.Model):
    id = models.UUIDField(primary_key=True, default=new_id, editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True
        ordering = ["created_at", "id"]


class ResourceModel(TimestampedModel):
    """A soft-deletable resource with the specification's status object and metadata."""

    status_code = models.CharField(max_length=100, default="ACTIVE")
    status_description = models.CharField(max_length=256, null=True, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    deleted_at = models.DateTimeField(null=True, blank=True)

    class Meta(TimestampedModel.Meta):
        abstract = True

    @property
    def is_deleted(self) -> bool:
        return self.deleted_at is not None
