"""The journal's routes under a ledger (a transaction's proof is among the transactions')."""

from django.urls import path

from journal import views

urlpatterns = [
    path(
        "organizations/<str:organization_id>/ledgers/<str:ledger_id>/journal",
        views.JournalBlocks.as_view(),
    ),
]
