from django.apps import AppConfig


class TemplatesDslConfig(AppConfig):
    name = "templates_dsl"
    default_auto_field = "django.db.models.BigAutoField"
