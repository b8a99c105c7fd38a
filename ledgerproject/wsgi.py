"""WSGI entry point (gunicorn ledgerproject.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application

from ledgerproject import heap

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ledgerproject.settings")
application = get_wsgi_application()
heap.freeze_startup()  # out of the garbage collector's sight: ledgerproject/heap.py
