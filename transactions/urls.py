"""Transaction, account-statement and chart routes under a ledger."""

from django.urls import path

from transactions import views

LEDGER = "organizations/<str:organization_id>/ledgers/<str:ledger_id>"
TX = f"{LEDGER}/transactions"
ACCOUNT = f"{LEDGER}/accounts/<str:account_id>"
SCHEDULED = f"{LEDGER}/scheduled-postings"

# The transactions' own routes, matched before any other (``ledgerproject.urls``): postings are
# most of the traffic, and no other route matches a path under .../transactions.
transaction_routes = [
    path(TX, views.TransactionCollection.as_view()),
    path(f"{TX}/batch", views.TransactionBatch.as_view()),
    path(f"{TX}/dsl", views.TransactionInlineDsl.as_view()),
    path(f"{TX}/json", views.TransactionInlineJson.as_view()),
    path(f"{TX}/<str:transaction_id>", views.TransactionItem.as_view()),
    path(f"{TX}/<str:transaction_id>/commit", views.TransactionCommit.as_view(action="commit")),
    path(f"{TX}/<str:transaction_id>/revert", views.TransactionAction.as_view(action="revert")),
    path(f"{TX}/<str:transaction_id>/cancel", views.TransactionAction.as_view(action="cancel")),
    path(f"{TX}/<str:transaction_id>/proof", views.TransactionProof.as_view()),
]
urlpatterns = [
    path(f"{ACCOUNT}/transactions", views.AccountTransactions.as_view()),
    path(f"{ACCOUNT}/operations", views.AccountOperations.as_view()),
    path(f"{ACCOUNT}/balance", views.AccountBalanceAt.as_view()),
    path(f"{ACCOUNT}/rolled-up-balance", views.AccountRolledUpBalance.as_view()),
    path(f"{LEDGER}/charts", views.ChartView.as_view()),
    path(f"{LEDGER}/trial-balance", views.TrialBalance.as_view()),
    path(f"{LEDGER}/period-report", views.PeriodReport.as_view()),
    path(SCHEDULED, views.ScheduledPostingCollection.as_view()),
    path(f"{SCHEDULED}/<str:scheduled_id>", views.ScheduledPostingItem.as_view()),
    path(f"{SCHEDULED}/<str:scheduled_id>/cancel", views.ScheduledPostingCancel.as_view()),
]
