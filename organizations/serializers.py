"""Request and response shapes for organizations, ledgers and the resources of a ledger."""

from __future__ import annotations

from typing import Any

import pycountry
from rest_framework import serializers

from ledgerproject.api.errors import ApiError, ErrorCode
from ledgerproject.api.fields import MetadataField, StatusField, TimestampField
from ledgerproject.api.serializers import InputSerializer

TIMESTAMPS = frozenset({"id", "createdAt", "updatedAt", "deletedAt"})


class TimestampsOut(serializers.Serializer):
    createdAt = TimestampField(source="created_at")
    updatedAt = TimestampField(source="updated_at")
    deletedAt = TimestampField(source="deleted_at")


class AddressIn(InputSerializer):
    line1 = serializers.CharField(max_length=256, required=False, allow_blank=True)
    line2 = serializers.CharField(max_length=256, required=False, allow_blank=True, allow_null=True)
    zipCode = serializers.CharField(max_length=32, required=False, allow_blank=True)
    city = serializers.CharField(max_length=128, required=False, allow_blank=True)
    state = serializers.CharField(max_length=128, required=False, allow_blank=True)
    country = serializers.CharField(max_length=2)

    def validate_country(self, value: str) -> str:
        if len(value) != 2 or not value.isupper() or pycountry.countries.get(alpha_2=value) is None:
            raise ApiError(
                ErrorCode.INVALID_COUNTRY_CODE,
                f"'{value}' is not an ISO 3166-1 alpha-2 country code.",
                fields={"address.country": "not an ISO 3166-1 alpha-2 code"},
            )
        return value


class AddressOut(serializers.Serializer):
    line1 = serializers.CharField(required=False)
    line2 = serializers.CharField(required=False, allow_null=True)
    zipCode = serializers.CharField(required=False)
    city = serializers.CharField(required=False)
    state = serializers.CharField(required=False)
    country = serializers.CharField(required=False)


class OrganizationOut(TimestampsOut):
    id = serializers.UUIDField()
    parentOrganizationId = serializers.UUIDField(source="parent_id", allow_null=True)
    legalName = serializers.CharField(source="legal_name")
    legalDocument = serializers.CharField(source="legal_document")
    doingBusinessAs = serializers.CharField(source="doing_business_as", allow_null=True)
    address = AddressOut()
    status = StatusField()
    metadata = MetadataField()


class OrganizationCreateIn(InputSerializer):
    unmodifiable = TIMESTAMPS
    legalName = serializers.CharField(max_length=256, source="legal_name")
    legalDocument = serializers.CharField(max_length=256, source="legal_document")
    doingBusinessAs = serializers.CharField(
        max_length=256, source="doing_business_as", required=False, allow_null=True, allow_blank=True
    )
    address = AddressIn(required=False)
    parentOrganizationId = serializers.UUIDField(source="parent_id", required=False, allow_null=True)
    status = StatusField(required=False)
    metadata = MetadataField(required=False)


class OrganizationUpdateIn(InputSerializer):
    unmodifiable = TIMESTAMPS | {"legalDocument"}
    legalName = serializers.CharField(max_length=256, source="legal_name", required=False)
    doingBusinessAs = serializers.CharField(
        max_length=256, source="doing_business_as", required=False, allow_null=True, allow_blank=True
    )
    address = AddressIn(required=False)
    parentOrganizationId = serializers.UUIDField(source="parent_id", required=False, allow_null=True)
    parentOganizationId = serializers.UUIDField(
        source="parent_id_misspelt", required=False, allow_null=True
    )
    status = StatusField(required=False)
    metadata = MetadataField(required=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if "parent_id_misspelt" in attrs:
            misspelt = attrs.pop("parent_id_misspelt")
            if "parent_id" in attrs and attrs["parent_id"] != misspelt:
                raise serializers.ValidationError(
                    "parentOrganizationId and parentOganizationId disagree."
                )
            attrs["parent_id"] = misspelt
        return attrs


class LedgerOut(TimestampsOut):
    id = serializers.UUIDField()
    organizationId = serializers.UUIDField(source="organization_id")
    name = serializers.CharField()
    status = StatusField()
    metadata = MetadataField()


class LedgerCreateIn(InputSerializer):
    unmodifiable = TIMESTAMPS | {"organizationId"}
    name = serializers.CharField(max_length=256)
    status = StatusField(required=False)
    metadata = MetadataField(required=False)


class LedgerUpdateIn(LedgerCreateIn):
    name = serializers.CharField(max_length=256, required=False)
