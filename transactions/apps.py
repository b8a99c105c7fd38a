from django.apps import AppConfig


class TransactionsConfig(AppConfig):
    name = "transactions"
    verbose_name = "Transactions"
    default_auto_field = "django.db.models.BigAutoField"
