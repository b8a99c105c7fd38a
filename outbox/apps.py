"""The outbox app: the event log every other app writes to, in the same database transaction
as its change. It sits at the bottom of the layering (every domain app may import it)."""

from django.apps import AppConfig
from django.utils.module_loading import autodiscover_modules


class OutboxConfig(AppConfig):
    name = "outbox"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The apps' ``serializers`` modules register how a resource renders (``renderers``),
        # the way the admin discovers ``admin`` modules: the domain records an event by model
        # class and never imports the HTTP layer.
        autodiscover_modules("serializers")
