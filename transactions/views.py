"""Transaction endpoints: post (with dry-run and idempotency), commit, revert, cancel, reads,
account statements and balances, and charts. Thin: parse, call a service or selector, render."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.http import HttpResponse
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from journal import sealer
from journal import selectors as journal
from journal.serializers import ProofOut, proof_data
from ledgerproject.api.exceptions import api_error_for
from ledgerproject.api.filters import known_filters, run_filterset
from ledgerproject.api.pagination import KeysetPage, refuse_unknown_parameters
from ledgerproject.api.renderers import json_response
from ledgerproject.api.schema import date_parameter, text_or
from ledgerproject.api.serializers import validated
from ledgerproject.api.views import ScopedAPIView
from ledgerproject.errors import ErrorCode, LedgerError, invalid_parameter
from ledgerproject.formats import digits_to_int, parse_timestamp, render_timestamp
from organizations import periods
from organizations.models import Account
from organizations.rollups import as_list
from organizations.selectors import parse_id
from organizations.serializers import RolledUpBalanceOut
from templates_dsl.inline import template_from_json, template_from_text
from templates_dsl.serializers import checked_text, media_type, uploaded_text
from transactions import (
    answers,
    engine,
    idempotency,
    inline_schema,
    reports,
    rollups,
    scheduling,
    selectors,
    states,
)
from transactions.filters import ScheduledPostingFilter, TransactionFilter
from transactions.models import Transaction
from transactions.prepare import item_error
from transactions.rendering import operations_data, scheduled_data, transaction_data
from transactions.schema import (
    ERRORS,
    KEY_HEADERS,
    LIST_PARAMS,
    POST_PARAMS,
    POST_RESPONSES,
    SCHEDULED_LIST_PARAMS,
    replayed_on,
)
from transactions.serializers import (
    ActionIn,
    BatchItemOut,
    ChartIn,
    ChartOut,
    CommitIn,
    InlineDslIn,
    InlineJsonIn,
    PeriodReportOut,
    PointInTimeBalanceOut,
    ScheduledPostingOut,
    StatementOperationOut,
    TransactionBatchIn,
    TransactionBatchItemIn,
    TransactionIn,
    TransactionOut,
    TrialBalanceOut,
)


def render_transactions(rows: list[Transaction]) -> list[Any]:
    return [transaction_data(tx) for tx in rows]


def _header(request: Request, *names: str) -> str | None:
    """The first of these headers sent, read from the WSGI environment (``HTTP_<NAME>``) as
    ``request.headers`` reads it, without building an entry for every header."""
    meta = request.META
    return next((meta[name] for name in names if name in meta), None)


def _key(request: Request) -> str | None:
    return _header(request, "HTTP_IDEMPOTENCYKEY", "HTTP_IDEMPOTENCY_KEY")


def _tolerance(request: Request) -> int | None:
    return idempotency.parse_tolerance(_header(request, "HTTP_TOLERANCE"))


def _claim(request: Request, body: Any, seconds: int | None) -> idempotency.Claim | None:
    return idempotency.claim_for(key=_key(request), seconds=seconds, body=body)


class PostsFromCopies(ScopedAPIView):
    """A single posting with no idempotency key writes nothing before the engine's locking
    statement (a key's row would be): it may run on the process's copy of its ledger. A keyed
    posting, a batch, and everything else read the ledger first."""

    def posts_from_copies(self, request: Request) -> bool:
        return request.method == "POST" and _key(request) is None


def _respond(status_code: int, body: Any, replayed: bool) -> HttpResponse:
    return json_response(body, status_code, {"Idempotent-Replayed": "true"} if replayed else None)


def posting_request(data: dict[str, Any], claim: idempotency.Claim | None = None) -> Any:
    return engine.PostingRequest(claim=claim, **data)


class TransactionCollection(PostsFromCopies):
    dry_run_is_read = True

    @extend_schema(parameters=LIST_PARAMS, responses={200: TransactionOut(many=True), **ERRORS})
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        page = KeysetPage(request, known=known_filters(TransactionFilter))
        queryset = run_filterset(TransactionFilter, selectors.transactions_of(self.ledger), request)
        rows = page.slice(queryset)
        return page.response(render_transactions(rows))

    @extend_schema(request=TransactionIn, parameters=POST_PARAMS, responses=POST_RESPONSES)
    def post(self, request: Request, *args: Any, **kwargs: Any) -> HttpResponse:
        return post_one(self.ledger, request, validated(TransactionIn, request.data), request.data)


def post_one(ledger: Any, request: Request, data: dict[str, Any], body: Any) -> HttpResponse:
    """Post one parsed request (or simulate it with ``?dryRun=true``, or keep it for later with
    ``scheduledFor``); ``body`` is what its idempotency key or tolerance hashes."""
    claim = _claim(request, body, _tolerance(request))  # checked on a dry run too
    scheduled_for = data.pop("scheduled_for", None)
    dry_run = request.query_params.get("dryRun", "").lower() in {"true", "1"}
    if scheduled_for is not None:
        if dry_run:
            raise LedgerError(
                ErrorCode.BAD_REQUEST,
                "A dry run checks a posting made now: it takes no scheduledFor.",
                fields={"scheduledFor": "not with dryRun"},
            )
        answer = scheduling.schedule(ledger, posting_request(data, claim), scheduled_for)
        return _respond(answer.status, answer.body, answer.replayed)
    if dry_run:
        headers = {answers.DRY_RUN_HEADER: "true"}
        body = answers.dry_run(ledger, posting_request(data))
        return json_response(body, status.HTTP_200_OK, headers)
    outcome = engine.post(ledger, posting_request(data, claim))
    return _respond(*answers.posting(outcome))


class TransactionInlineDsl(PostsFromCopies):
    """``POST .../transactions/dsl``: a posting whose template is in the request, as
    template-language text. ``text/plain`` (or no Content-Type): the body is the text and the
    template uses no variables; so too a JSON string of the text, and a ``multipart/form-data``
    upload's part named ``dsl`` or its one file part (``curl -F dsl=@payment.tmpl``, as Midaz
    clients send it); ``application/json``: ``{"dsl": text, "variables": {...}}`` plus the
    options of any posting."""

    @extend_schema(
        operation_id="transactions_inline_dsl",
        # The upload is left out of the schema (the description says it): a generated client
        # would offer it beside the JSON form, which does all it does and more, and a schema
        # fuzzer would send the JSON form's options as parts.
        request={
            "application/json": text_or(InlineDslIn, "The template text, as a JSON string."),
            "text/plain": inline_schema.DSL_TEXT,
        },
        parameters=POST_PARAMS,
        responses=POST_RESPONSES,
    )
    def post(self, request: Request, *args: Any, **kwargs: Any) -> HttpResponse:
        media = media_type(request)
        if media == "application/json" and not isinstance(request.data, str):
            data = validated(InlineDslIn, request.data)
            text, body = data.pop("dsl"), request.data
        else:
            text, data = _dsl_text(request, media), {}
            body = {"dsl": text}
        return post_one(self.ledger, request, {**data, "inline": template_from_text(text)}, body)


def _dsl_text(request: Request, media: str) -> str:
    """The text of ``transactions/dsl``'s forms without variables: the body, a JSON string, or
    an upload."""
    if media == "application/json":
        return checked_text(str(request.data).encode())
    if media == "multipart/form-data":
        return uploaded_text(request)
    return text_body(request)


class TransactionInlineJson(PostsFromCopies):
    """``POST .../transactions/json``: a posting whose template is in the request, as JSON
    that maps one to one onto the template's syntax tree (``templates_dsl.inline``)."""

    @extend_schema(
        operation_id="transactions_inline_json",
        request={"application/json": inline_schema.INLINE_JSON},
        parameters=POST_PARAMS,
        responses=POST_RESPONSES,
    )
    def post(self, request: Request, *args: Any, **kwargs: Any) -> HttpResponse:
        body = request.data
        if not isinstance(body, dict):
            raise LedgerError(ErrorCode.BAD_REQUEST, "The request body must be a JSON object.")
        names = (
            "variables", "parentTransactionId", "expiresAt", "effectiveAt", "commitAt",
            "scheduledFor", "rate",
        )  # fmt: skip
        options = {k: body[k] for k in names if k in body}
        data = validated(InlineJsonIn, options)
        tree = {k: v for k, v in body.items() if k not in options}
        return post_one(self.ledger, request, {**data, "inline": template_from_json(tree)}, body)


def text_body(request: Request) -> str:
    """The raw body as template text: UTF-8, bounded, not empty (0049)."""
    return checked_text(request.body)


def _batch_item(index: int, item: Any, ttl: int) -> engine.PostingRequest:
    """Parse one item of a batch. An item that does not match the schema refuses the whole
    batch, atomic or not (400, ``fields.index``): the request is malformed, and nothing of it
    is posted. Only a well-formed item's refusal by a rule is answered in its place."""
    try:
        data = validated(TransactionBatchItemIn, item)
    except Exception as exc:  # noqa: BLE001 - every parsing failure is the batch's
        raise item_error(index, api_error_for(exc)) from None
    key = data.pop("idempotency_key", None)
    body = {k: v for k, v in item.items() if k != "idempotencyKey"}
    claim = idempotency.Claim(key, idempotency.request_hash(body), ttl) if key else None
    return posting_request(data, claim)


class TransactionBatch(ScopedAPIView):
    """POST .../transactions/batch: up to 1,000 postings, atomic (201) or each on its own (200)."""

    @extend_schema(
        request=TransactionBatchIn,
        parameters=[*KEY_HEADERS, replayed_on(200, 201)],
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
    def post(self, request: Request, *args: Any, **kwargs: Any) -> HttpResponse:
        data = validated(TransactionBatchIn, request.data)
        seconds = _tolerance(request)  # the batch's key's lifetime, and its items'
        claim = _claim(request, request.data, seconds)
        ttl = seconds or idempotency.DEFAULT_TTL
        items = [_batch_item(i, item, ttl) for i, item in enumerate(data["transactions"])]
        result = engine.post_batch(self.ledger, items, atomic=data["atomic"], claim=claim)
        return _respond(*answers.batch(result, atomic=data["atomic"]))


class TransactionItem(ScopedAPIView):
    @extend_schema(responses={200: TransactionOut, **ERRORS})
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        tx = self.get_scoped(selectors.transactions_of(self.ledger), kwargs["transaction_id"],
                             "transaction")  # fmt: skip
        return Response(transaction_data(tx))


class TransactionProof(ScopedAPIView):
    """GET .../transactions/{id}/proof: each journal entry about the transaction with its Merkle
    path and block; 202 while one waits for its seal (docs/BOOKS.md)."""

    @extend_schema(
        summary="Prove a transaction is in the journal",
        responses={
            200: ProofOut,
            202: OpenApiResponse(ProofOut, description="An entry is not sealed yet."),
            **ERRORS,
        },
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        tx = self.get_scoped(selectors.transactions_of(self.ledger), kwargs["transaction_id"],
                             "transaction")  # fmt: skip
        sealed, unsealed = journal.proofs(tx.organization_id, tx.ledger_id, tx.pk)
        body = {
            "transactionId": str(tx.pk),
            "sealed": not unsealed,
            "proofs": [proof_data(p) for p in sealed],
            "unsealedEntries": len(unsealed),
        }
        if unsealed:
            sealer.wake(tx.organization_id, tx.ledger_id)
            return Response(body, status=202, headers={"Retry-After": "2"})
        return Response(body)


class TransactionAction(ScopedAPIView):
    """POST .../transactions/{id}/commit | revert | cancel."""

    action: str = ""

    @extend_schema(
        request=ActionIn,
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
        data = _optional_body(request, ActionIn)
        tx = states.ACTIONS[self.action](ledger=self.ledger, transaction_id=pk, **data)
        created = self.action != "commit"
        return Response(transaction_data(tx), status=201 if created else 200)


class TransactionCommit(TransactionAction):
    """POST .../transactions/{id}/commit, with an optional body naming a smaller amount."""

    @extend_schema(
        request=CommitIn,
        responses={
            200: OpenApiResponse(TransactionOut, description="the committed transaction"),
            **ERRORS,
        },
    )
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        pk = parse_id(kwargs["transaction_id"], "transaction")
        data = _optional_body(request, CommitIn)
        amount = None
        if "amount" in data:
            amount = states.Amount(data["amount"], data.get("scale"))
        elif "scale" in data:
            raise LedgerError(
                ErrorCode.MISSING_FIELDS, "scale needs an amount.", fields={"amount": "missing"}
            )
        tx = states.commit(
            ledger=self.ledger, transaction_id=pk, amount=amount, effective_at=data["effective_at"]
        )
        return Response(transaction_data(tx), status=200)


def _optional_body(request: Request, serializer: Any) -> dict[str, Any]:
    """An action's body: none is the same as ``{}``; one sent must be an object (``null`` is
    not one)."""
    body = request.data
    return validated(serializer, {} if isinstance(body, Mapping) and not body else body)


class AccountScopedView(ScopedAPIView):
    def account(self) -> Account:
        account = self.get_scoped(Account.objects.all(), self.kwargs["account_id"], "account")
        account.ledger = self.ledger
        return account


class AccountTransactions(AccountScopedView):
    @extend_schema(parameters=LIST_PARAMS, responses={200: TransactionOut(many=True), **ERRORS})
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        page = KeysetPage(request, known=known_filters(TransactionFilter))
        queryset = run_filterset(
            TransactionFilter, selectors.transactions_of_account(self.account()), request
        )
        return page.response(render_transactions(page.slice(queryset)))


STATEMENT_ORDERS = ("posted", "effective")


class AccountOperations(AccountScopedView):
    @extend_schema(
        parameters=[
            OpenApiParameter(
                "order",
                {"type": "string", "enum": list(STATEMENT_ORDERS), "default": "posted"},
                description="posted: in the order they were written, each with the stored "
                "balance before and after it; effective: in the order they took effect, each "
                "also with the balance effective just after it (runningBalance).",
            ),
            *LIST_PARAMS[-3:],
        ],
        responses={200: StatementOperationOut(many=True), **ERRORS},
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        order = request.query_params.get("order") or "posted"
        if order not in STATEMENT_ORDERS:
            raise invalid_parameter("order", "order must be posted or effective.")
        keys = ("effective_at", "id") if order == "effective" else ("balance_version", "id")
        page = KeysetPage(request, keys=keys, known=("order",))
        account = self.account()
        rows = page.slice(selectors.statement_of(account))
        data = operations_data(rows)
        if order == "effective":
            running = selectors.statement_in_effective_order(account, rows)
            for item, (_, balance) in zip(data, running, strict=True):
                item["runningBalance"] = balance
        return page.response(data)


class AccountBalanceAt(AccountScopedView):
    @extend_schema(
        parameters=[
            date_parameter("at", "The balance effective at this date or time; default now."),
            date_parameter(
                "asOf",
                "As the ledger knew it at this date or time (what had been posted "
                "by then); default now.",
            ),
        ],
        responses={200: PointInTimeBalanceOut, **ERRORS},
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        refuse_unknown_parameters(request, ("at", "asOf"))
        account = self.account()
        now = timezone.now()
        at, as_of = (
            parse_timestamp(raw, field=name, end_of_day=True) if raw else now
            for name in ("at", "asOf")
            for raw in [request.query_params.get(name)]
        )
        balance = selectors.balance_at(account, at=at, as_of=as_of)
        return Response(
            {
                "accountId": str(account.pk),
                "alias": account.alias,
                "assetCode": account.asset_code,
                "at": render_timestamp(at),
                "asOf": render_timestamp(as_of),
                **balance,
            }
        )


class AccountRolledUpBalance(AccountScopedView):
    @extend_schema(
        parameters=[
            date_parameter("at", "The balances effective at this date or time; default now.")
        ],
        responses={200: RolledUpBalanceOut, **ERRORS},
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        refuse_unknown_parameters(request, ("at",))
        account = self.account()
        now = timezone.now()
        raw = request.query_params.get("at")
        at = parse_timestamp(raw, field="at", end_of_day=True) if raw else now
        totals = rollups.rolled_up(self.ledger, [account.pk], at=at, now=now)[account.pk]
        return Response(
            {
                "accountId": str(account.pk),
                "alias": account.alias,
                "at": render_timestamp(at),
                "balances": as_list(totals),
            }
        )


class TrialBalance(ScopedAPIView):
    """GET .../trial-balance?at=: every account's debits, credits and balance effective at a
    moment, per asset and chart of accounts (docs/TIME.md)."""

    @extend_schema(
        parameters=[
            date_parameter(
                "at",
                "Effective at this moment; a date is its end, in the ledger's time zone. "
                "Default now.",
            )
        ],
        responses={200: TrialBalanceOut, **ERRORS},
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        refuse_unknown_parameters(request, ("at",))
        raw = request.query_params.get("at")
        at = periods.ledger_moment(self.ledger, raw, field="at", end_of_day=True) if raw else None
        report = reports.trial_balance(self.ledger, at or timezone.now())
        return Response(reports.report_data(report))


class PeriodReport(ScopedAPIView):
    """GET .../period-report?from=&to=: every account's opening balance, debits, credits and
    closing balance over a period of effective dates (docs/TIME.md)."""

    @extend_schema(
        parameters=[
            date_parameter(
                "from", "The period's first moment; a date is its start.", required=True
            ),
            date_parameter("to", "The period's last moment; a date is its end.", required=True),
        ],
        responses={200: PeriodReportOut, **ERRORS},
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        refuse_unknown_parameters(request, ("from", "to"))
        params = request.query_params
        missing = [name for name in ("from", "to") if not params.get(name)]
        if missing:
            raise LedgerError(
                ErrorCode.MISSING_FIELDS,
                f"{' and '.join(missing)} required: the period's first and last day.",
                fields={name: "required" for name in missing},
            )
        start = periods.ledger_moment(self.ledger, params["from"], field="from", end_of_day=False)
        end = periods.ledger_moment(self.ledger, params["to"], field="to", end_of_day=True)
        return Response(reports.report_data(reports.period_report(self.ledger, start, end)))


class ChartView(ScopedAPIView):
    read_only_post = True

    @extend_schema(
        request=ChartIn,
        parameters=[
            OpenApiParameter(
                "limit",
                {"type": "integer", "minimum": 1, "maximum": 100},
                description="totalAmountByAsset: 1 to 100.",
            )
        ],
        responses={200: ChartOut, **ERRORS},
    )
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        data = validated(ChartIn, request.data)
        limit = digits_to_int(request.query_params.get("limit", "3"))
        if limit is None or not 1 <= limit <= 100:
            raise LedgerError(
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


class ScheduledPostingCollection(ScopedAPIView):
    """GET .../scheduled-postings: the ledger's scheduled postings, oldest first."""

    @extend_schema(
        parameters=SCHEDULED_LIST_PARAMS,
        responses={200: ScheduledPostingOut(many=True), **ERRORS},
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        page = KeysetPage(request, known=known_filters(ScheduledPostingFilter))
        queryset = run_filterset(
            ScheduledPostingFilter, selectors.scheduled_of(self.ledger), request
        )
        return page.response([scheduled_data(row) for row in page.slice(queryset)])


class ScheduledPostingItem(ScopedAPIView):
    @extend_schema(responses={200: ScheduledPostingOut, **ERRORS})
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        row = self.get_scoped(
            selectors.scheduled_of(self.ledger), kwargs["scheduled_id"], "scheduled posting"
        )
        return Response(scheduled_data(row))


class ScheduledPostingCancel(ScopedAPIView):
    """POST .../scheduled-postings/{id}/cancel: before its time, it will not be posted."""

    @extend_schema(request=None, responses={200: ScheduledPostingOut, **ERRORS})
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        pk = parse_id(kwargs["scheduled_id"], "scheduled posting")
        return Response(scheduled_data(scheduling.cancel(self.ledger, pk)))
