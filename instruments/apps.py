from django.apps import AppConfig


class InstrumentsConfig(AppConfig):
    name = "instruments"
    verbose_name = "Instruments"
    default_auto_field = "django.db.models.BigAutoField"
