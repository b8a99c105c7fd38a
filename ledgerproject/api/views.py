"""View bases. Tenancy lives here: a view under /organizations/{id}[/ledgers/{id}] gets
``self.organization`` and ``self.ledger`` resolved against the token, and its queryset is
filtered by them before the view sees it. Views never write that filter themselves."""

from __future__ import annotations

from typing import Any, ClassVar

import django_filters
from django.core.exceptions import ImproperlyConfigured
from django.db import connection
from django.db.models import Model, QuerySet
from django.http import HttpRequest, JsonResponse
from rest_framework import status
from rest_framework.exceptions import APIException
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import Serializer
from rest_framework.views import APIView

from ledgerproject import kept
from ledgerproject.api.authentication import (
    BearerTokenAuthentication,
    TokenPrincipal,
    principal_of,
)
from ledgerproject.api.filters import known_filters, refuse_empty_values, run_filterset
from ledgerproject.api.pagination import KeysetPage
from ledgerproject.api.serializers import InputSerializer, validated
from ledgerproject.db import database_name
from ledgerproject.errors import ErrorCode, LedgerError
from organizations.models import Ledger, Organization
from organizations.selectors import (
    ledger_missing,
    not_found,
    organization_get_for,
    parse_id,
)
from transactions import copies


class ScopedAPIView(APIView):
    """Resolves ``organization_id`` and ``ledger_id`` from the path against the token, failing
    closed: a view whose path names neither must declare ``principal_scoped`` (it filters by
    the token's reach itself, as the organization list does), and ``scope_filter`` raises for
    a view that resolved no scope instead of filtering nothing. Objects are fetched through
    ``get_scoped``, so "not yours" and "missing" are the same 404."""

    principal_scoped: ClassVar[bool] = False
    organization: Organization
    ledger: Ledger
    principal: TokenPrincipal

    # The ledger statement reads the authentication epoch, so under a ledger a token may come
    # from the process's copy (``authentication.BearerTokenAuthentication``).
    confirms_token_epoch: ClassVar[bool] = True

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        """The request may run on what the process keeps (``ledgerproject.kept``): one found
        stale is the exception ``handle_exception`` makes the request again for."""
        with kept.allowed():
            return super().dispatch(request, *args, **kwargs)

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        self.principal = principal_of(request)
        if "ledger_id" in kwargs:
            self.organization, self.ledger = self._ledger(request, kwargs)
        elif "organization_id" in kwargs:
            self.organization = organization_get_for(self.principal, kwargs["organization_id"])
        elif not self.principal_scoped:
            raise ImproperlyConfigured(
                f"{type(self).__name__} has no organization or ledger in its path and does not "
                "declare principal_scoped: it would see every tenant."
            )
        refuse_empty_values(request)

    def _ledger(self, request: Request, kwargs: dict[str, Any]) -> tuple[Organization, Ledger]:
        """The path's organization and ledger. A token from the process's copy is confirmed
        by the epoch the same statement reads; if the epoch moved, the token is read again
        and the ledger resolved with it."""
        ids = kwargs["organization_id"], kwargs["ledger_id"]
        epoch = self.principal.unconfirmed_epoch
        if epoch is not None and self.posts_from_copies(request):
            copy = copies.copy_of(self.principal, *ids)
            if copy is not None:
                return copy
        found, current = copies.read_ledger(self.principal, *ids)
        if epoch is not None and current != epoch:
            return self._read_again(request, ids)
        self.principal.unconfirmed_epoch = None
        return self._found(found, ids)

    def _read_again(self, request: Request, ids: tuple[Any, Any]) -> tuple[Organization, Ledger]:
        """The token read again from the database (its permissions checked again), then the
        path's organization and ledger with it."""
        self.principal = BearerTokenAuthentication().reauthenticate(request)
        self.check_permissions(request)
        found, _ = copies.read_ledger(self.principal, *ids)
        return self._found(found, ids)

    def _found(
        self, found: tuple[Organization, Ledger] | None, ids: tuple[Any, Any]
    ) -> tuple[Organization, Ledger]:
        """The ledger read, or which of the path's two is missing (404)."""
        if found is None:
            raise ledger_missing(self.principal, *ids)
        return found

    def posts_from_copies(self, request: Request) -> bool:
        """Whether this request may run on this process's copy of its ledger
        (``transactions.copies``): only a request that writes nothing before the
        engine's locking statement confirms the copy. No view's may, unless it says so."""
        return False

    def _on_copy(self) -> bool:
        return copies.unconfirmed(getattr(self, "ledger", None))

    def _without_copies(self) -> Response:
        """The request again, the ordinary way: the token and the ledger read first (so a
        token revoked or a ledger deleted meanwhile answers as it would have), then the
        handler, which finds no copy to run on. Only when nothing was written: the copy is
        unconfirmed, or something kept was found stale before any write (``kept.Stale``)."""
        self.ledger.copy_check = None  # type: ignore[attr-defined]
        request = self.request
        try:
            with kept.allowed(yes=False):
                ids = self.kwargs["organization_id"], self.kwargs["ledger_id"]
                self.organization, self.ledger = self._read_again(request, ids)
                handler = getattr(self, str(request.method).lower())
                return handler(request, *self.args, **self.kwargs)
        except Exception as exc:  # noqa: BLE001 - answered as any handler's exception
            return super().handle_exception(exc)

    def handle_exception(self, exc: Exception) -> Response:
        """Something a posting on copies ran on was stale (its transaction rolled back, nothing
        committed): the request again, the ordinary way. The one place a request or a posting
        is made again. Safe because a view under a ledger writes only through the engine, in
        one database transaction, and every ``Stale`` is raised before it commits."""
        if isinstance(exc, kept.Stale) and kept.in_use() and hasattr(self, "ledger"):
            return self._without_copies()
        return super().handle_exception(exc)

    def finalize_response(
        self, request: Request, response: Any, *args: Any, **kwargs: Any
    ) -> Response:
        """Nothing is answered from an unconfirmed copy (``posts_from_copies``): an answer
        made before any locking statement confirmed it (a refusal, a replay, a dry run) is
        confirmed now, or made again the ordinary way."""
        if self._on_copy():
            try:
                copies.confirm_now(self.ledger)
            except copies.CopyChanged:
                response = self._without_copies()
        return super().finalize_response(request, response, *args, **kwargs)

    def check_permissions(self, request: Request) -> None:
        """A token from the process's copy that is refused is read again first: the refusal
        must not come from a copy older than the token."""
        try:
            super().check_permissions(request)
        except APIException:
            user = request.user
            if not isinstance(user, TokenPrincipal) or user.unconfirmed_epoch is None:
                raise
            BearerTokenAuthentication().reauthenticate(request)
            super().check_permissions(request)

    def scope_filter(self) -> dict[str, Any]:
        if hasattr(self, "ledger"):
            # The organization first: on Citus it routes the statement to one node.
            return {"organization_id": self.ledger.organization_id, "ledger_id": self.ledger.pk}
        if hasattr(self, "organization"):
            return {"organization_id": self.organization.pk}
        raise ImproperlyConfigured(f"{type(self).__name__} resolved no tenant to filter by.")

    def scoped(self, queryset: QuerySet[Any]) -> QuerySet[Any]:
        return queryset.filter(**self.scope_filter())

    def get_scoped(self, queryset: QuerySet[Any], raw_id: Any, noun: str) -> Any:
        """The one getter of an object by id in the view's tenant: 404 0007 when the id is
        malformed, missing or another tenant's."""
        obj = self.scoped(queryset).filter(pk=parse_id(raw_id, noun)).first()
        if obj is None:
            raise not_found(noun)
        return obj


class ResourceView(ScopedAPIView):
    """Declarative CRUD over one model in the view's scope.

    A subclass declares the model, the output serializer, the input serializers and the
    services; this class does parsing, tenancy, filtering, pagination and rendering.
    """

    model: ClassVar[type[Model]]
    output_serializer: ClassVar[type[Serializer]]
    create_serializer: ClassVar[type[InputSerializer] | None] = None
    update_serializer: ClassVar[type[InputSerializer] | None] = None
    filterset_class: ClassVar[type[django_filters.FilterSet] | None] = None
    select_related: ClassVar[tuple[str, ...]] = ()
    lookup_url_kwarg: ClassVar[str] = "pk"
    noun: ClassVar[str] = "resource"

    def get_queryset(self) -> QuerySet[Any]:
        queryset = self.scoped(self.model._default_manager.all())
        if self.select_related:
            queryset = queryset.select_related(*self.select_related)
        return queryset

    def get_object(self) -> Any:
        return self.get_scoped(self.get_queryset(), self.kwargs[self.lookup_url_kwarg], self.noun)

    def render(self, obj: Any, **context: Any) -> Any:
        return self.output_serializer(obj, context={"request": self.request, **context}).data

    def input(
        self, serializer: type[InputSerializer] | None, *, current: Any = None, **kwargs: Any
    ) -> dict[str, Any]:
        """The validated body; ``current``: the resource as rendered, against which a field
        that may not change is accepted when it is sent back unchanged."""
        if serializer is None:
            raise LedgerError(ErrorCode.METHOD_NOT_ALLOWED, "This method is not allowed here.")
        context = {"request": self.request, "view": self, "current": current}
        return validated(serializer, self.request.data, context=context, **kwargs)

    # Hooks a subclass fills with calls to its services.
    def perform_create(self, data: dict[str, Any]) -> Any:
        raise NotImplementedError

    def perform_update(self, obj: Any, data: dict[str, Any]) -> Any:
        raise NotImplementedError

    def perform_delete(self, obj: Any) -> None:
        raise NotImplementedError


class CollectionView(ResourceView):
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        page = KeysetPage(request, known=known_filters(self.filterset_class))
        queryset = run_filterset(self.filterset_class, self.get_queryset(), request)
        rows = page.slice(queryset)
        self.annotate_page(rows)
        many = self.output_serializer(rows, many=True, context={"request": request})
        return page.response(many.data)

    def annotate_page(self, rows: list[Any]) -> None:
        """What a list adds to the rows of a page, read for the page at once (a hook)."""

    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        data = self.input(self.create_serializer)
        obj = self.perform_create(data)
        return Response(self.render(obj), status=status.HTTP_201_CREATED)


class ItemView(ResourceView):
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return Response(self.render(self.get_object()))

    def patch(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        obj = self.get_object()
        data = self.input(self.update_serializer, partial=True, current=self.render(obj))
        ensure_not_deleted(obj, self.noun)
        obj = self.perform_update(obj, data)
        return Response(self.render(obj))

    def delete(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        obj = self.get_object()
        ensure_not_deleted(obj, self.noun)
        self.perform_delete(obj)
        return Response(status=status.HTTP_204_NO_CONTENT)


def ensure_not_deleted(obj: Any, noun: str = "resource") -> None:
    if getattr(obj, "deleted_at", None) is not None:
        raise LedgerError(ErrorCode.ALREADY_REMOVED, f"The {noun} has already been removed.")


class UnknownEndpointView(APIView):
    """Any /v1 path that matches nothing: 404 0007 in the envelope, without asking for a token."""

    authentication_classes: list[Any] = []
    permission_classes: list[Any] = []
    schema = None

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        return JsonResponse(
            LedgerError(ErrorCode.NOT_FOUND, "No such endpoint.").as_body(), status=404
        )


def health(request: HttpRequest) -> JsonResponse:
    """``GET /health``: 200 when the database answers, 503 when it does not."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
        return JsonResponse({"status": "ok", "database": database_name()})
    except Exception:  # noqa: BLE001 - any database failure is "unavailable"
        return JsonResponse({"status": "unavailable", "database": database_name()}, status=503)


__all__ = ["CollectionView", "ItemView", "ScopedAPIView", "health", "parse_id"]
