"""ASGI entry point."""

import os

from django.core.asgi import get_asgi_application

from ledgerproject import heap

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ledgerproject.settings")
application = get_asgi_application()
heap.freeze_startup()  # out of the garbage collector's sight: ledgerproject/heap.py
