"""Template routes: ``transaction-templates`` for writes and lists, ``transaction-types/{code}``
for retrieval by code (as the specification names it), with the other path as an alias."""

from django.urls import path

from templates_dsl import views

LEDGER = "organizations/<str:organization_id>/ledgers/<str:ledger_id>"

# Codes may hold "/" (names are [A-Za-z0-9_.-/]+): ``path`` keeps such templates reachable.
urlpatterns = [
    path(f"{LEDGER}/transaction-templates", views.TemplateCollection.as_view()),
    path(f"{LEDGER}/transaction-templates/<path:code>", views.TemplateItem.as_view()),
    path(f"{LEDGER}/transaction-types/<path:code>", views.TemplateByType.as_view()),
]
