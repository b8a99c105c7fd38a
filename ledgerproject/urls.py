"""URL map: the home page, the /v1 API, its schema and docs, /health, and the admin."""

from typing import Any

from django.contrib import admin
from django.urls import include, path, re_path
from django.views.generic import TemplateView
from drf_spectacular.views import SpectacularJSONAPIView, SpectacularSwaggerView

from ledgerproject.api.views import UnknownEndpointView, health
from transactions.urls import transaction_routes

public: dict[str, list[Any]] = {"authentication_classes": [], "permission_classes": []}

urlpatterns = [
    path("v1/", include(transaction_routes)),  # first: postings are most of the traffic
    path("", TemplateView.as_view(template_name="home.html"), name="home"),
    path("admin/", admin.site.urls),
    path("health", health, name="health"),
    path("v1/openapi.json", SpectacularJSONAPIView.as_view(**public), name="openapi"),
    path("v1/docs/", SpectacularSwaggerView.as_view(url_name="openapi", **public), name="docs"),
    path("v1/", include("organizations.urls")),
    path("v1/", include("instruments.urls")),
    path("v1/", include("templates_dsl.urls")),
    path("v1/", include("transactions.urls")),
    path("v1/", include("outbox.urls")),
    path("v1/", include("journal.urls")),
    re_path(r"^v1(?:/.*)?$", UnknownEndpointView.as_view()),
]

handler404 = "ledgerproject.api.exceptions.not_found"
handler500 = "ledgerproject.api.exceptions.server_error"
