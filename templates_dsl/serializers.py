"""The rendering of a transaction template (its JSON form), for the views and for events, and
template text read from a request in each of its forms: the body itself, JSON (a string or
``{"dsl": ...}``), or the one part of a ``multipart/form-data`` upload."""

from __future__ import annotations

import io

from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.http.multipartparser import MultiPartParser, MultiPartParserError
from rest_framework import serializers
from rest_framework.request import Request

from ledgerproject.api.fields import TimestampField
from ledgerproject.api.serializers import InputSerializer, validated
from ledgerproject.errors import ErrorCode, LedgerError
from outbox import renderers
from templates_dsl import limits
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


# Template text as a request sends it: the body itself, JSON, or a multipart upload.


def media_type(request: Request) -> str:
    return (request.content_type or "").split(";", 1)[0].strip().lower()


def checked_text(raw: bytes) -> str:
    """Template text from its UTF-8 bytes: bounded (413), decoded, not empty (0049)."""
    if len(raw) > limits.MAX_TEMPLATE_BYTES:  # read at the call: tests lower it
        raise RequestDataTooBig("The template text is larger than MAX_TEMPLATE_BYTES.")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise LedgerError(ErrorCode.BAD_REQUEST, "The template text must be UTF-8.") from None
    if not text.strip():
        raise LedgerError(ErrorCode.EMPTY_DSL, "The template text is empty.")
    return text


def uploaded_text(request: Request) -> str:
    """The template of a ``multipart/form-data`` body (``curl -F dsl=@payment.tmpl``): the
    part named ``dsl``, a file or a field, else the one file part whatever its name. Any other
    part is refused (0053), as an unknown field of a JSON body is."""
    # Read whole first (bounded: 413), then parsed from memory; by hand, because Django
    # parses a multipart body by itself for a POST only, and a PUT takes one too.
    body = io.BytesIO(request.body)
    try:
        parser = MultiPartParser(request.META, body, request.upload_handlers, request.encoding)
        fields, files = parser.parse()
    except (MultiPartParserError, SuspiciousOperation) as exc:
        raise LedgerError(ErrorCode.BAD_REQUEST, f"Malformed multipart body: {exc}") from None
    uploads = [(name, f.read()) for name, found in files.lists() for f in found]
    values = [(name, value.encode()) for name, found in fields.lists() for value in found]
    parts = uploads + values
    chosen = [part for part in parts if part[0] == "dsl"] or uploads
    if not chosen:
        raise LedgerError(
            ErrorCode.MISSING_FIELDS,
            "The multipart body has no template: send it as a file part named dsl.",
            fields={"dsl": "required"},
        )
    if len(chosen) > 1:
        raise LedgerError(
            ErrorCode.BAD_REQUEST,
            "The multipart body has several template parts: send one, named dsl.",
            fields={"dsl": "several parts"},
        )
    others = sorted({part[0] for part in parts if part is not chosen[0]})
    if others:
        raise LedgerError(
            ErrorCode.UNEXPECTED_FIELDS,
            f"Unexpected parts in the multipart body: {', '.join(others)}; send only the "
            "template, as a file part named dsl.",
            fields={name: "unexpected part" for name in others},
        )
    return checked_text(chosen[0][1])


def template_text(request: Request) -> str:
    """The template text of a request, in any of its forms. With a JSON Content-Type, a body
    that is a JSON object or string is the JSON form; any other is read as text, as before
    there was a JSON form (template text never starts with ``{`` or ``"``)."""
    raw = request.body
    media = media_type(request)
    if media == "multipart/form-data":
        return uploaded_text(request)
    if media == "application/json" and raw.lstrip()[:1] in (b"{", b'"'):
        data = request.data
        text = data if isinstance(data, str) else validated(TemplateTextIn, data)["dsl"]
        return checked_text(text.encode())
    return checked_text(raw)
