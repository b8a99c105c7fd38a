"""Template routes: ``transaction-templates`` for writes and lists, ``transaction-types/{code}``
for retrieval by code (as the specification names it), with the other path as an alias."""

from django.urls import path

from templates_dsl import views

LEDGER = "organizations/<str:organization_id>/ledgers/<str:ledger_id>"

urlpatterns = [
    path(f"{LEDGER}/transaction-templates", views.TemplateCollection.as_view()),
    path(f"{LEDGER}/transaction-templates/<str:code>", views.TemplateItem.as_view()),
    path(f"{LEDGER}/transaction-types/<str:code>", views.TemplateByType.as_view()),
]
