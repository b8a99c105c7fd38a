"""The journal app: a ledger's events sealed into a hash chain of Merkle blocks, and the proofs
that a client checks itself. It sits just above the outbox, whose events are its entries."""

from django.apps import AppConfig
from django.utils.module_loading import import_string


class JournalConfig(AppConfig):
    name = "journal"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The sealer needs the models, so it is loaded once they are (as the outbox loads the
        # apps' renderers): it listens for the ledgers whose events each commit wrote.
        import_string("journal.sealer.start_listening")()
