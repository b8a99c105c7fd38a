"""Abstract model bases shared by every tenant resource: ids, timestamps, status, metadata."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from typing import Any

from django.db import IntegrityError, models, transaction
from django.db.models import QuerySet
from django.utils import timezone
from uuid6 import uuid7

from ledgerproject.api.errors import ApiError


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


def active_duplicate_exists(duplicates: QuerySet[Any]) -> bool:
    """The pre-check of ``unique_among_active`` (tests replace it to reach the race path)."""
    return duplicates.filter(deleted_at__isnull=True).exists()


@contextlib.contextmanager
def unique_among_active(
    duplicates: QuerySet[Any], conflict: ApiError, *, exclude: Any = None
) -> Iterator[None]:
    """Write, inside this block, a row that must be unique among the active rows ``duplicates``
    selects: an active duplicate answers ``conflict`` before the write, and the partial unique
    constraint's IntegrityError (a duplicate committed meanwhile) answers it after."""
    if exclude is not None:
        duplicates = duplicates.exclude(pk=exclude)
    if active_duplicate_exists(duplicates):
        raise conflict
    try:
        with transaction.atomic():
            yield
    except IntegrityError:
        raise conflict from None
