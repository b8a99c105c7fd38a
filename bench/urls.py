"""URL map of the bench settings: the service's own URLs plus the reference floor."""

from django.urls import path

from bench.floor import floor_transfer
from ledgerproject.urls import handler404, handler500
from ledgerproject.urls import urlpatterns as service_urls

urlpatterns = [path("bench/floor/<uuid:ledger_id>", floor_transfer), *service_urls]

__all__ = ["handler404", "handler500", "urlpatterns"]
