"""Organization and ledger endpoints: thin views over the services."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from ledgerproject.api.views import CollectionView, ItemView
from organizations import serializers as s
from organizations import services
from organizations.models import Ledger, Organization
from organizations.selectors import organizations_visible


class OrganizationCollection(CollectionView):
    model = Organization
    noun = "organization"
    output_serializer = s.OrganizationOut
    create_serializer = s.OrganizationCreateIn

    def get_queryset(self) -> QuerySet[Organization]:
        return organizations_visible(self.principal)

    def perform_create(self, data: dict[str, Any]) -> Organization:
        return services.organization_create(principal=self.principal, **data)


class OrganizationItem(ItemView):
    model = Organization
    noun = "organization"
    output_serializer = s.OrganizationOut
    update_serializer = s.OrganizationUpdateIn

    def get_object(self) -> Organization:
        return self.organization

    def perform_update(self, obj: Organization, data: dict[str, Any]) -> Organization:
        return services.organization_update(organization=obj, principal=self.principal, data=data)

    def perform_delete(self, obj: Organization) -> None:
        services.organization_delete(organization=obj)


class LedgerCollection(CollectionView):
    model = Ledger
    noun = "ledger"
    output_serializer = s.LedgerOut
    create_serializer = s.LedgerCreateIn

    def perform_create(self, data: dict[str, Any]) -> Ledger:
        return services.ledger_create(organization=self.organization, **data)


class LedgerItem(ItemView):
    model = Ledger
    noun = "ledger"
    output_serializer = s.LedgerOut
    update_serializer = s.LedgerUpdateIn

    def get_object(self) -> Ledger:
        return self.ledger

    def perform_update(self, obj: Ledger, data: dict[str, Any]) -> Ledger:
        return services.ledger_update(ledger=obj, data=data)

    def perform_delete(self, obj: Ledger) -> None:
        services.ledger_delete(ledger=obj)
