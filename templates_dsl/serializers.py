"""The rendering of a transaction template (its JSON form), for the views and for events."""

from __future__ import annotations

from rest_framework import serializers

from ledgerproject.api.fields import TimestampField
from outbox import renderers
from templates_dsl.models import TransactionTemplate


class TemplateOut(serializers.Serializer):
    id = serializers.UUIDField()
    code = serializers.CharField()
    description = serializers.CharField(allow_null=True)
    pending = serializers.BooleanField()
    chartOfAccountsGroupName = serializers.CharField(source="chart_of_accounts_group_name")
    text = serializers.CharField()
    createdAt = TimestampField(source="created_at")
    updatedAt = TimestampField(source="updated_at")


renderers.register(TransactionTemplate, "template", lambda t: TemplateOut(t).data)
