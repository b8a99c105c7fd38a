"""/v1/organizations and /v1/organizations/{id}/ledgers."""

from django.urls import path

from organizations import views

ORG = "organizations/<str:organization_id>"
LEDGER = f"{ORG}/ledgers/<str:ledger_id>"

urlpatterns = [
    path("organizations", views.OrganizationCollection.as_view()),
    path(ORG, views.OrganizationItem.as_view()),
    path(f"{ORG}/ledgers", views.LedgerCollection.as_view()),
    path(LEDGER, views.LedgerItem.as_view()),
]
