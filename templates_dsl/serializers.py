"""The rendering of a transaction template (its JSON form), for the views and for events, and
the JSON form of template text in a request body."""

from __future__ import annotations

from rest_framework import serializers

from ledgerproject.api.fields import TimestampField
from ledgerproject.api.serializers import InputSerializer
from outbox import renderers
from templates_dsl.limits import MAX_TEMPLATE_BYTES
from templates_dsl.models import TransactionTemplate


class TemplateTextIn(InputSerializer):
    """Template text as a JSON object, ``{"dsl": "<text>"}`` (a JSON string is the text too):
    what a generated client sends, its generator sending no ``text/plain`` body as it is."""

    dsl = serializers.CharField(
        max_length=MAX_TEMPLATE_BYTES, trim_whitespace=False, help_text="The template text."
    )


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
