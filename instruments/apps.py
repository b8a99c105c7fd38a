from django.apps import AppConfig


class InstrumentsConfig(AppConfig):
    name = "instruments"
    default_auto_field = "django.db.models.BigAutoField"
