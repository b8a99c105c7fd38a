"""The events API (``GET .../events`` of an organization or a ledger, in order: ``selectors``)
and webhook subscriptions (``.../webhooks``, of an organization or of one ledger)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param

from ledgerproject.api.filters import refuse_nul_characters
from ledgerproject.api.pagination import DEFAULT_LIMIT, MAX_LIMIT
from ledgerproject.api.schema import (
    COMMON_ERRORS,
    CURSOR_SCHEMA,
    date_parameter,
    error_responses,
    limit_parameter,
)
from ledgerproject.api.views import CollectionView, ItemView, ScopedAPIView
from ledgerproject.errors import ErrorCode, LedgerError, invalid_parameter
from ledgerproject.formats import digits_to_int, parse_timestamp
from outbox import serializers as s
from outbox import webhooks
from outbox.events import CATALOGUE, event_body
from outbox.models import Event, WebhookSubscription
from outbox.selectors import events_after
from outbox.serializers import EventOut, decode_cursor, encode_cursor

EVENT_PARAMS = [
    OpenApiParameter("type", str, many=True, enum=list(CATALOGUE), description="Repeatable."),
    date_parameter("beginDate", "Inclusive date or timestamp."),
    date_parameter("endDate", "Inclusive date or timestamp."),
    limit_parameter(),
    OpenApiParameter(
        "cursor", CURSOR_SCHEMA, description="An event's cursor: the events after it."
    ),
    OpenApiParameter("sort_order", str, enum=["asc", "desc"]),
]


def _limit(raw: str | None) -> int:
    if raw is None or raw == "":
        return DEFAULT_LIMIT
    limit = digits_to_int(raw)
    if limit is None or limit < 1:
        raise invalid_parameter("limit", "limit must be a positive integer.")
    if limit > MAX_LIMIT:
        raise LedgerError(
            ErrorCode.PAGINATION_LIMIT_EXCEEDED,
            f"limit may be at most {MAX_LIMIT}.",
            fields={"limit": f"at most {MAX_LIMIT}"},
        )
    return limit


class EventList(ScopedAPIView):
    """The events of the organization (all its ledgers) or of one ledger, oldest first; a
    client that keeps the ``cursor`` of the last event it read and asks for the events after it
    sees every event exactly once, in order (docs/EVENTS.md)."""

    @extend_schema(
        parameters=EVENT_PARAMS,
        responses={200: EventOut(many=True), **error_responses(*COMMON_ERRORS)},
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        refuse_nul_characters(request)
        params = request.query_params
        limit = _limit(params.get("limit"))
        order = (params.get("sort_order") or "asc").lower()
        if order not in {"asc", "desc"}:
            raise invalid_parameter("sort_order", "sort_order must be asc or desc.")
        raw_cursor = params.get("cursor")
        cursor = decode_cursor(raw_cursor) if raw_cursor else None
        queryset = self.scoped(Event.objects.all())
        types = params.getlist("type")
        if types:
            unknown = sorted(set(types) - set(CATALOGUE))
            if unknown:
                raise invalid_parameter("type", f"Unknown event type: {', '.join(unknown)[:200]}.")
            queryset = queryset.filter(type__in=types)
        if params.get("beginDate"):
            begin = parse_timestamp(params["beginDate"], field="beginDate")
            queryset = queryset.filter(created_at__gte=begin)
        if params.get("endDate"):
            end = parse_timestamp(params["endDate"], field="endDate", end_of_day=True)
            queryset = queryset.filter(created_at__lte=end)
        rows = list(events_after(queryset, cursor, descending=order == "desc")[: limit + 1])
        response = Response([{**event_body(e), "cursor": encode_cursor(e)} for e in rows[:limit]])
        if len(rows) > limit:
            after = encode_cursor(rows[limit - 1])
            url = replace_query_param(request.build_absolute_uri(), "cursor", after)
            response["Link"] = f'<{url}>; rel="next"'
        return response


class WebhookCollection(CollectionView):
    """Webhook subscriptions: list and create. The answer of a create holds the ``secret``,
    shown this once. Under a ledger the subscription receives that ledger's events only."""

    model = WebhookSubscription
    noun = "webhook"
    output_serializer = s.WebhookOut
    create_serializer = s.WebhookCreateIn

    @extend_schema(
        request=s.WebhookCreateIn,
        responses={201: s.WebhookCreatedOut, **error_responses(*COMMON_ERRORS, 422)},
    )
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        data = self.input(self.create_serializer)
        ledger = getattr(self, "ledger", None)
        subscription = webhooks.subscription_create(
            organization_id=self.organization.pk,
            ledger_id=ledger.pk if ledger is not None else None,
            **data,
        )
        return Response(s.WebhookCreatedOut(subscription).data, status=201)


class WebhookItem(ItemView):
    """One subscription: read, update (url, eventTypes, status ACTIVE/PAUSED, description),
    delete. A paused subscription's deliveries wait and go out when it is active again."""

    model = WebhookSubscription
    noun = "webhook"
    output_serializer = s.WebhookOut
    update_serializer = s.WebhookUpdateIn

    def perform_update(self, obj: WebhookSubscription, data: dict[str, Any]) -> Any:
        return webhooks.subscription_update(subscription=obj, data=data)

    def perform_delete(self, obj: WebhookSubscription) -> None:
        webhooks.subscription_delete(subscription=obj)
