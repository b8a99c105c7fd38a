"""Instruments and the two faces of rates, under /v1/organizations/{id}/ledgers/{id}."""

from django.urls import path

from instruments import views
from organizations.urls import LEDGER

urlpatterns = [
    path(f"{LEDGER}/instruments", views.InstrumentCollection.as_view()),
    path(f"{LEDGER}/instruments/<str:pk>", views.InstrumentItem.as_view()),
    path(f"{LEDGER}/instrument-rates", views.InstrumentRateCollection.as_view()),
    path(f"{LEDGER}/instrument-rates/<str:pk>", views.InstrumentRateItem.as_view()),
    path(f"{LEDGER}/asset-rates", views.AssetRateCollection.as_view()),
    path(f"{LEDGER}/asset-rates/<str:pk>", views.AssetRateItem.as_view()),
]
