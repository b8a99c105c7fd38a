"""Event and webhook subscription routes."""

from django.urls import path

from outbox import views

ORG = "organizations/<str:organization_id>"

urlpatterns = [
    path(f"{ORG}/events", views.EventList.as_view()),
    path(f"{ORG}/ledgers/<str:ledger_id>/events", views.EventList.as_view()),
    path(f"{ORG}/webhooks", views.WebhookCollection.as_view()),
    path(f"{ORG}/webhooks/<str:pk>", views.WebhookItem.as_view()),
    path(f"{ORG}/ledgers/<str:ledger_id>/webhooks", views.WebhookCollection.as_view()),
    path(f"{ORG}/ledgers/<str:ledger_id>/webhooks/<str:pk>", views.WebhookItem.as_view()),
]
