from django.apps import AppConfig


class TemplatesDslConfig(AppConfig):
    name = "templates_dsl"
    verbose_name = "Templates"
    default_auto_field = "django.db.models.BigAutoField"
