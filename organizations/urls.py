"""/v1/organizations, their ledgers, and the portfolios, products, accounts and balance
monitors of a ledger."""

from django.urls import path

from organizations import views

ORG = "organizations/<str:organization_id>"
LEDGER = f"{ORG}/ledgers/<str:ledger_id>"

urlpatterns = [
    path("organizations", views.OrganizationCollection.as_view()),
    path(ORG, views.OrganizationItem.as_view()),
    path(f"{ORG}/ledgers", views.LedgerCollection.as_view()),
    path(LEDGER, views.LedgerItem.as_view()),
    path(f"{LEDGER}/portfolios", views.PortfolioCollection.as_view()),
    path(f"{LEDGER}/portfolios/<str:pk>", views.PortfolioItem.as_view()),
    path(f"{LEDGER}/products", views.ProductCollection.as_view()),
    path(f"{LEDGER}/products/<str:pk>", views.ProductItem.as_view()),
    path(f"{LEDGER}/accounts", views.AccountCollection.as_view()),
    path(f"{LEDGER}/accounts/alias/<path:alias>", views.AccountByAlias.as_view()),
    path(f"{LEDGER}/accounts/<str:pk>", views.AccountItem.as_view()),
    path(f"{LEDGER}/accounts/<str:account_id>/balances", views.AccountBalances.as_view()),
    path(f"{LEDGER}/balances", views.BalanceCollection.as_view()),
    path(f"{LEDGER}/balance-monitors", views.BalanceMonitorCollection.as_view()),
    path(f"{LEDGER}/balance-monitors/<str:pk>", views.BalanceMonitorItem.as_view()),
]
