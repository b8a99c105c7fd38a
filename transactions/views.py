"""Transaction endpoints: post (with dry-run and idempotency), commit, revert, cancel, reads,
account statements and balances, and charts. Thin: parse, call a service or selector, render."""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable
from typing import Any

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from ledgerproject.api.errors import ApiError, ErrorCode
from ledgerproject.api.exceptions import api_error_for
from ledgerproject.api.fields import digits_to_int, parse_timestamp, render_timestamp
from ledgerproject.api.filters import run_filterset
from ledgerproject.api.pagination import KeysetPage
from ledgerproject.api.schema import COMMON_ERRORS, error_responses
from ledgerproject.api.serializers import validated
from ledgerproject.api.views import ScopedAPIView
from organizations.models import Account
from organizations.selectors import not_found, parse_id
from transactions import batch, selectors, services
from transactions.filters import TransactionFilter
from transactions.models import Transaction
from transactions.serializers import (
    BatchItemOut,
    ChartIn,
    ChartOut,
    OperationOut,
    PointInTimeBalanceOut,
    TransactionBatchIn,
    TransactionBatchItemIn,
    TransactionIn,
    TransactionOut,
    transaction_data,
)

DEFAULT_KEY_TTL = 86_400
MAX_TOLERANCE = 604_800
ERRORS = error_responses(*COMMON_ERRORS, 409, 422)

LIST_PARAMS = [
    OpenApiParameter("beginDate", str, description="Inclusive date or timestamp."),
    OpenApiParameter("endDate", str, description="Inclusive date or timestamp."),
    OpenApiParameter("assetCode", str),
    OpenApiParameter("status", str, many=True),
    OpenApiParameter("type", str, description="Template code."),
    OpenApiParameter("parentTransactionId", str),
    OpenApiParameter("metadata", str, many=True, description="<key>:<value>, repeatable."),
    OpenApiParameter("limit", int),
    OpenApiParameter("cursor", str),
    OpenApiParameter("sort_order", str, enum=["asc", "desc"]),
]


def render_transaction(tx: Transaction) -> Any:
    return transaction_data(tx)


def render_transactions(rows: list[Transaction]) -> list[Any]:
    return [transaction_data(tx) for tx in rows]


def _header(request: Request, *names: str) -> str | None:
    for name in names:
        value = request.headers.get(name)
        if value is not None:
            return value.strip()
    return None


def _tolerance(request: Request) -> int | None:
    raw_tolerance = _header(request, "tolerance")
    if not raw_tolerance:
        return None
    tolerance = digits_to_int(raw_tolerance)
    if tolerance is None or tolerance > MAX_TOLERANCE:
        raise ApiError(
            ErrorCode.BAD_REQUEST,
            f"tolerance must be a whole number of seconds from 0 to {MAX_TOLERANCE}.",
            fields={"tolerance": "invalid"},
        )
    return tolerance


def _body_hash(body: Any) -> str:
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _claim_for(
    request: Request,
    body: Any,
    *,
    render: Callable[[Any], Any] = render_transaction,
    status_code: int = 201,
) -> services.IdempotencyClaim | None:
    key = _header(request, "idempotencyKey", "Idempotency-Key")
    tolerance = _tolerance(request)
    if key is not None and (not 1 <= len(key) <= 255 or "\x00" in key):
        raise ApiError(
            ErrorCode.BAD_REQUEST,
            "idempotencyKey must be 1 to 255 characters, none of them NUL.",
            fields={"idempotencyKey": "invalid length or a NUL character"},
        )
    request_hash = _body_hash(body)
    if key is None:
        if not tolerance:
            return None
        key = f"sha256:{request_hash}"
    return services.IdempotencyClaim(
        key=key,
        request_hash=request_hash,
        ttl_seconds=tolerance if tolerance else DEFAULT_KEY_TTL,
        render=render,
        status_code=status_code,
    )


def _known_answer(ledger: Any, claim: services.IdempotencyClaim | None) -> Response | None:
    """The stored answer to a repeated key, looked up before any work is done."""
    if claim is None:
        return None
    record = services.idempotency_lookup(ledger=ledger, key=claim.key)
    if record is None:
        return None
    if record.request_hash != claim.request_hash:
        raise services.key_mismatch()
    return _replay(record)


def _replay(record: Any) -> Response:
    return Response(
        record.response_body,
        status=record.response_status,
        headers={"Idempotent-Replayed": "true"},
    )


class TransactionCollection(ScopedAPIView):
    dry_run_is_read = True

    @extend_schema(parameters=LIST_PARAMS, responses={200: TransactionOut(many=True), **ERRORS})
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        page = KeysetPage(request)
        queryset = run_filterset(TransactionFilter, selectors.transactions_of(self.ledger), request)
        rows = page.slice(queryset)
        return page.response(render_transactions(rows))

    @extend_schema(
        request=TransactionIn,
        parameters=[
            OpenApiParameter("dryRun", bool, description="Check and simulate; write nothing."),
            OpenApiParameter("idempotencyKey", str, OpenApiParameter.HEADER),
            OpenApiParameter("Idempotency-Key", str, OpenApiParameter.HEADER),
            OpenApiParameter("tolerance", int, OpenApiParameter.HEADER),
        ],
        responses={
            201: TransactionOut,
            200: OpenApiResponse(TransactionOut, description="Dry run, or an idempotent replay"),
            **ERRORS,
        },
    )
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        dry_run = request.query_params.get("dryRun", "").lower() in {"true", "1"}
        data = validated(TransactionIn, request.data)
        if dry_run:
            tx = services.transaction_post(ledger=self.ledger, dry_run=True, **data)
            return Response(render_transaction(tx), status=status.HTTP_200_OK)
        claim = _claim_for(request, request.data)
        replay = _known_answer(self.ledger, claim)
        if replay is not None:
            return replay
        try:
            tx = services.transaction_post(ledger=self.ledger, claim=claim, **data)
        except services.IdempotentReplay as replay:
            return _replay(replay.record)
        return Response(render_transaction(tx), status=status.HTTP_201_CREATED)


def _batch_entry(item: Any) -> batch.BatchEntry:
    """Parse one item of a batch; a refusal is kept on the entry, to be answered in place."""
    try:
        data = validated(TransactionBatchItemIn, item)
    except Exception as exc:  # noqa: BLE001 - every parsing failure becomes the item's error
        return batch.BatchEntry(data=None, error=api_error_for(exc))
    key = data.pop("idempotency_key", None)
    body = {k: v for k, v in item.items() if k != "idempotencyKey"}
    return batch.BatchEntry(data=data, key=key, request_hash=_body_hash(body))


def render_batch(outcomes: list[batch.ItemOutcome], *, atomic: bool) -> list[Any]:
    if atomic:
        return [outcome.body for outcome in outcomes]
    rendered = []
    for index, outcome in enumerate(outcomes):
        item: dict[str, Any] = {"index": index, "status": outcome.status}
        item["transaction" if outcome.ok else "error"] = outcome.body
        if outcome.replayed:
            item["idempotentReplayed"] = True
        rendered.append(item)
    return rendered


class TransactionBatch(ScopedAPIView):
    """POST .../transactions/batch: up to 1,000 postings, atomic (201) or each on its own (200)."""

    @extend_schema(
        request=TransactionBatchIn,
        parameters=[
            OpenApiParameter("idempotencyKey", str, OpenApiParameter.HEADER),
            OpenApiParameter("Idempotency-Key", str, OpenApiParameter.HEADER),
            OpenApiParameter("tolerance", int, OpenApiParameter.HEADER),
        ],
        responses={
            201: OpenApiResponse(
                TransactionOut(many=True),
                description="atomic: every transaction, in the order of the items",
            ),
            200: OpenApiResponse(
                BatchItemOut(many=True),
                description="not atomic: each item's status and transaction or error, in order",
            ),
            **ERRORS,
        },
    )
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        data = validated(TransactionBatchIn, request.data)
        atomic = data["atomic"]
        status_code = status.HTTP_201_CREATED if atomic else status.HTTP_200_OK
        claim = _claim_for(
            request,
            request.data,
            render=functools.partial(render_batch, atomic=atomic),
            status_code=status_code,
        )
        replay = _known_answer(self.ledger, claim)
        if replay is not None:
            return replay
        tolerance = _tolerance(request)
        try:
            outcomes = batch.transactions_post_batch(
                ledger=self.ledger,
                entries=[_batch_entry(item) for item in data["transactions"]],
                atomic=atomic,
                ttl_seconds=tolerance if tolerance else DEFAULT_KEY_TTL,
                claim=claim,
            )
        except services.IdempotentReplay as replayed:
            return _replay(replayed.record)
        return Response(render_batch(outcomes, atomic=atomic), status=status_code)


class TransactionItem(ScopedAPIView):
    @extend_schema(responses={200: TransactionOut, **ERRORS})
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        pk = parse_id(kwargs["transaction_id"], "transaction")
        tx = selectors.transactions_of(self.ledger).filter(pk=pk).first()
        if tx is None:
            raise not_found("transaction")
        return Response(render_transaction(tx))


class TransactionAction(ScopedAPIView):
    """POST .../transactions/{id}/commit | revert | cancel."""

    action: str = ""

    @extend_schema(
        request=None,
        responses={
            200: OpenApiResponse(TransactionOut, description="commit: the committed transaction"),
            201: OpenApiResponse(
                TransactionOut, description="revert, cancel: the new reverting transaction"
            ),
            **ERRORS,
        },
    )
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        pk = parse_id(kwargs["transaction_id"], "transaction")
        service = {
            "commit": services.transaction_commit,
            "revert": services.transaction_revert,
            "cancel": services.transaction_cancel,
        }[self.action]
        tx = service(ledger=self.ledger, transaction_id=pk)
        created = self.action != "commit"
        return Response(render_transaction(tx), status=201 if created else 200)


class AccountScopedView(ScopedAPIView):
    def account(self) -> Account:
        pk = parse_id(self.kwargs["account_id"], "account")
        account = Account.objects.filter(ledger_id=self.ledger.pk, pk=pk).first()
        if account is None:
            raise not_found("account")
        account.ledger = self.ledger
        return account


class AccountTransactions(AccountScopedView):
    @extend_schema(parameters=LIST_PARAMS, responses={200: TransactionOut(many=True), **ERRORS})
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        page = KeysetPage(request)
        queryset = run_filterset(
            TransactionFilter, selectors.transactions_of_account(self.account()), request
        )
        return page.response(render_transactions(page.slice(queryset)))


class AccountOperations(AccountScopedView):
    @extend_schema(parameters=LIST_PARAMS[-3:], responses={200: OperationOut(many=True), **ERRORS})
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        page = KeysetPage(request, keys=("balance_version", "id"))
        rows = page.slice(selectors.statement_of(self.account()))
        return page.response(OperationOut(rows, many=True).data)


class AccountBalanceAt(AccountScopedView):
    @extend_schema(
        parameters=[OpenApiParameter("at", str, description="Date or timestamp; default now.")],
        responses={200: PointInTimeBalanceOut, **ERRORS},
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        from django.utils import timezone

        account = self.account()
        raw = request.query_params.get("at")
        at = parse_timestamp(raw, field="at", end_of_day=True) if raw else timezone.now()
        balance = selectors.balance_at(account, at)
        return Response(
            {
                "accountId": str(account.pk),
                "alias": account.alias,
                "assetCode": account.asset_code,
                "at": render_timestamp(at),
                **balance,
            }
        )


class ChartView(ScopedAPIView):
    read_only_post = True

    @extend_schema(
        request=ChartIn,
        parameters=[OpenApiParameter("limit", int, description="totalAmountByAsset: 1 to 100.")],
        responses={200: ChartOut, **ERRORS},
    )
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        data = validated(ChartIn, request.data)
        limit = digits_to_int(request.query_params.get("limit", "3"))
        if limit is None or not 1 <= limit <= 100:
            raise ApiError(
                ErrorCode.INVALID_QUERY_PARAMETER,
                "limit must be an integer from 1 to 100.",
                fields={"limit": "1 to 100"},
            )
        result = selectors.chart_compute(
            ledger=self.ledger,
            chart_type=data["type"],
            start=data.get("startDate"),
            end=data.get("endDate"),
            limit=limit,
        )
        return Response(result)
